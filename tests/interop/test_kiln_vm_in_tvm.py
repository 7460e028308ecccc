"""Kiln's Relax VM executables run in Apache TVM 0.27: programs built with
`compiler.relax.build` (symbolic batch, If on a run-time value, nested tuples, closures and calls;
from ONNX: a CNN with a symbolic batch, attention with a symbolic sequence, a run-time If, and
what BERT's and GPT-2's exporters write for a symbolic sequence: positions sliced up to it
with a run-time clamp, a causal mask from CumSum / GatherND / slices ending at Shape)
are exported as one library and run by `tvm.relax.VirtualMachine` in a subprocess
(tvm_run_kiln_vm.py), their outputs compared with numpy (rtol = atol = 1e-4); a bad input is
rejected with TVM's error carrying Kiln's error context (the parameter's name)."""
import json
import subprocess

import numpy as np
from tvm_subprocess import TVM_PYTHON, requires_tvm

pytestmark = requires_tvm


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flatten(item)]
    return [np.asarray(v)]


def _case(tmp_path, name, lib, args, expected=None, error=None):
    data = {f"a{i}": a for i, a in enumerate(args)}
    outs = _flatten(expected) if expected is not None else []
    data.update({f"e{i}": e for i, e in enumerate(outs)})
    path = str(tmp_path / f"{name}.npz")
    np.savez(path, **data)
    return {"name": name, "lib": lib, "data": path, "num_args": len(args),
            "num_outputs": len(outs), "error": error}


def _dynamic_onnx_cases(tmp_path, ort, from_onnx):
    """A CNN with a symbolic batch, self-attention with a symbolic sequence length, an If on a
    run-time condition, BERT's position slice and GPT-2's causal mask, from ONNX
    (compiler/frontend/testing/dynamic_models.py), each built once and run at several sizes
    (and down both branches), ONNX Runtime's outputs the expected values."""
    from compiler import relax
    from compiler.frontend.testing import dynamic_models as dm

    rng = np.random.default_rng(11)
    a = np.abs(rng.standard_normal((4, 3))).astype("float32") + 0.1
    models = {
        "cnn_batch_n": (dm.cnn(["N", 3, 8, 8]),
                        [rng.standard_normal((n, 3, 8, 8)).astype("float32") for n in (1, 3)]),
        "attention_seq_s": (dm.attention(2), [rng.standard_normal((1, s, dm.HIDDEN))
                                              .astype("float32") for s in (1, 5, 17)]),
        "runtime_if": (dm.runtime_if(), [a, -a]),
        "position_slice": (dm.position_embeddings(8), [rng.standard_normal((1, s, dm.HIDDEN))
                                                       .astype("float32") for s in (3, 8)]),
        "causal_positions": (dm.causal_positions(), [rng.standard_normal((1, s, dm.HIDDEN))
                                                     .astype("float32") for s in (1, 7)]),
    }
    cases = []
    for name, (model, xs) in models.items():
        mod, params = from_onnx(model)
        lib = str(tmp_path / f"{name}.so")
        relax.build(mod, "llvm", params=params).export_library(lib)
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        for i, x in enumerate(xs):
            want = sess.run(None, {"x": x})
            cases.append(_case(tmp_path, f"{name}_{i}", lib, [x], want[0]))
    return cases


def test_kiln_vm_programs_run_in_tvm(tmp_path):
    from compiler import relax
    from compiler.relax.testing import vm_models

    cases = []
    for name, make in vm_models.ALL.items():
        prog = make()
        lib = str(tmp_path / f"{name}.so")
        relax.build(prog.mod, "llvm", params=prog.params).export_library(lib)
        if name == "mlp":
            for n in (1, 7, 64):
                args = prog.args(n=n)
                cases.append(_case(tmp_path, f"mlp_n{n}", lib, args, prog.reference(*args)))
            bad = [np.zeros((3, 5), "float32")]
            cases.append(_case(tmp_path, "mlp_bad_shape", lib, bad, error="param=x"))
            bad = [np.zeros((3, 784), "float64")]
            cases.append(_case(tmp_path, "mlp_bad_dtype", lib, bad, error="param=x"))
        elif name == "branch":
            for sign in (1.0, -1.0):
                args = prog.args(n=5, sign=sign)
                cases.append(_case(tmp_path, f"branch_{sign:+.0f}", lib, args,
                                   prog.reference(*args)))
        elif name == "nested_tuple":
            args = prog.args(n=3)
            cases.append(_case(tmp_path, name, lib, args, prog.reference(*args)))
            bad = [args[0], np.zeros((4, 3), "float32")]
            cases.append(_case(tmp_path, "tuple_shared_dim", lib, bad, error="param=y"))
        else:
            args = prog.args(n=4)
            cases.append(_case(tmp_path, name, lib, args, prog.reference(*args)))
    # an ONNX model whose batch dim is named: from_onnx keeps it symbolic, relax.build runs it
    import onnxruntime as ort

    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=2)
    mod, params = from_onnx(m.model)
    lib = str(tmp_path / "onnx_mlp.so")
    relax.build(mod, "llvm", params=params).export_library(lib)
    sess = ort.InferenceSession(m.model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 5):
        x = np.random.default_rng(n).standard_normal((n, 32)).astype("float32")
        want, = sess.run(None, {"x": x})
        cases.append(_case(tmp_path, f"onnx_mlp_n{n}", lib, [x], want))
    cases += _dynamic_onnx_cases(tmp_path, ort, from_onnx)
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps(cases))
    import os
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tvm_run_kiln_vm.py")
    res = subprocess.run([TVM_PYTHON, script, str(spec)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    results = json.loads(res.stdout.strip().splitlines()[-1])
    failed = {k: v["detail"] for k, v in results.items() if not v["ok"]}
    assert not failed, failed
    assert set(results) == {c["name"] for c in cases}
