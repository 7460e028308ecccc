"""`python -m compiler compile`: an ONNX model to one file, its summary, and one-line errors."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from compiler.cli import main
from compiler.frontend.testing import onnx_models

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def mlp_onnx(tmp_path_factory):
    m = onnx_models.mlp(batch=2)
    path = str(tmp_path_factory.mktemp("cli") / "mlp.onnx")
    onnx.save(m.model, path)
    return m, path


def test_compile_summary_and_runs(mlp_onnx, tmp_path, capsys):
    import onnxruntime as ort

    import microruntime as mr
    from microruntime import graph_executor

    m, path = mlp_onnx
    out = str(tmp_path / "mlp.so")
    assert main(["compile", path, "--target", "llvm", "-o", out,
                 "--input-shape", "x:2,32", "--opt-level", "2"]) == 0
    captured = capsys.readouterr()
    assert "lowering kernel 1/" in captured.err           # progress lines
    assert f"-> {out}" in captured.out and "opt-level=2" in captured.out
    assert "x float32[2,32]" in captured.out and "output float32[2,10]" in captured.out
    assert "distinct kernels" in captured.out and "without planning" in captured.out
    gm = graph_executor.GraphModule(mr.load_module(out)["default"](mr.cpu()))
    x = m.inputs(seed=3)["x"]
    gm.set_input("x", x)
    gm.run()
    want, = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("api", ["opencl", "vulkan", "cuda"])
def test_gpu_target_compiles_for_the_device_and_runs_there(api, tmp_path, capsys):
    """The model is planned for the target given (no CPU layouts in a GPU build), and the
    runtime's command line runs it on that device (--device)."""
    import onnxruntime as ort

    import microruntime as mr

    m = onnx_models.resnet_style()
    path, out = str(tmp_path / "r.onnx"), str(tmp_path / "r.so")
    onnx.save(m.model, path)
    assert main(["compile", path, "--target", api, "-o", out, "--quiet",
                 "--input-shape", "x:1,3,16,16"]) == 0
    capsys.readouterr()
    if not mr.enabled(api):
        pytest.skip(f"no {api} device (microruntime.enabled({api!r}) is False)")
    x = m.inputs(seed=2)
    np.savez(tmp_path / "in.npz", **x)
    r = subprocess.run([sys.executable, "-m", "microruntime", "run", out, "--device", api,
                        "--inputs", str(tmp_path / "in.npz"), "--output",
                        str(tmp_path / "out.npz")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want, = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, x)
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["output_0"], want, rtol=1e-4,
                               atol=1e-5)


def test_quiet_and_system_lib(mlp_onnx, tmp_path, capsys):
    _, path = mlp_onnx
    out = str(tmp_path / "mlp.a")
    assert main(["compile", path, "--target", "c", "-o", out, "--input-shape", "2,32",
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "--system-lib" in captured.out
    with open(out, "rb") as f:
        assert f.read(8) == b"!<arch>\n"


@pytest.mark.parametrize("argv, message", [
    (["compile", "{missing}", "-o", "{out}"], "error: no such model file"),
    (["compile", "{model}", "-o", "{out}", "--input-shape", "x:2,a"],
     "error: bad --input-shape 'x:2,a'"),
    (["compile", "{model}", "-o", "{out}", "--input-shape", "y:2,32"],
     "error: --input-shape 'y:2,32': the model has no input 'y'; its inputs are x"),
    (["compile", "{notonnx}", "-o", "{out}", "--input-shape", "x:2,32"], "error: "),
])
def test_one_line_errors(mlp_onnx, tmp_path, capsys, argv, message):
    _, path = mlp_onnx
    (tmp_path / "junk.onnx").write_bytes(b"\x00not a model" * 10)
    names = dict(missing=str(tmp_path / "nope.onnx"), model=path, out=str(tmp_path / "m.so"),
                 notonnx=str(tmp_path / "junk.onnx"))
    assert main([a.format(**names) for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(message), err
    assert not any("Traceback" in line for line in err)
    assert not os.path.exists(names["out"])


def test_symbolic_dims_build_for_the_vm(mlp_onnx, tmp_path, capsys):
    _, path = mlp_onnx
    out = str(tmp_path / "mlp_vm.so")
    assert main(["compile", path, "-o", out, "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "(Relax VM)" in summary and "x[N,32]" in summary
    with open(out, "rb") as f:
        assert b"relax.VMExecutable" in f.read()


def test_runtime_if_builds_for_the_vm_and_runs(tmp_path, capsys):
    """A model with an If on a run-time condition (static shapes) goes to the VM too."""
    from onnx import TensorProto, helper

    import microruntime as mr
    from microruntime.relax_vm import VirtualMachine

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])

    def branch(op, name):
        return helper.make_graph([helper.make_node(op, ["x"], [name])], name, [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])])

    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor(
                 "zero", TensorProto.FLOAT, [], [0.0])),
             helper.make_node("Greater", ["s", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=branch("Relu", "t"),
                              else_branch=branch("Neg", "e"))]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path, out = str(tmp_path / "if.onnx"), str(tmp_path / "if.so")
    onnx.save(model, path)
    assert main(["compile", path, "-o", out, "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "(Relax VM)" in summary and "an If on a run-time condition" in summary
    vm = VirtualMachine(mr.load_module(out), mr.cpu())
    for sign in (1.0, -1.0):
        a = sign * np.abs(np.random.default_rng(0).standard_normal((2, 3))).astype("float32")
        want = np.maximum(a, 0) if a.sum() > 0 else -a
        np.testing.assert_allclose(vm["main"](mr.nd.array(a)).numpy(), want, rtol=1e-6)


def test_help_and_usage_errors_as_a_program():
    env = dict(os.environ, PYTHONPATH=ROOT)
    ok = subprocess.run([sys.executable, "-m", "compiler", "compile", "--help"], cwd=ROOT,
                        env=env, stdout=subprocess.PIPE, text=True, check=False)
    assert ok.returncode == 0 and "--input-shape" in ok.stdout and "examples:" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "compiler"], cwd=ROOT, env=env,
                         stderr=subprocess.PIPE, text=True, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _zero_dim_onnx(path):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "zero", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def test_zero_size_dims_compile_and_run_empty(mlp_onnx, tmp_path, capsys):
    """A zero-size dimension (the MLP's GEMMs at batch 0, a Relu of [0, 4]) compiles and
    gives empty outputs; it once stopped in the GEMM schedule with a ZeroDivisionError."""
    import microruntime as mr
    from microruntime import graph_executor

    _, path = mlp_onnx
    zero = str(tmp_path / "zero.onnx")
    _zero_dim_onnx(zero)
    for argv, shape in ((["compile", path, "--input-shape", "x:0,32"], (0, 10)),
                        (["compile", zero], (0, 4))):
        out = str(tmp_path / "z.so")
        assert main(argv + ["-o", out, "--quiet"]) == 0, capsys.readouterr().err
        gm = graph_executor.GraphModule(mr.load_module(out)["default"](mr.cpu()))
        gm.set_input("x", np.zeros((0, shape[1] if shape[1] == 4 else 32), "float32"))
        gm.run()
        assert gm.get_output(0).numpy().shape == shape


def _fails(exc):
    def fail(*_args, **_kwargs):
        raise exc
    return fail


@pytest.mark.parametrize("traceback", [False, True])
def test_unexpected_error_is_one_line_with_a_hint(mlp_onnx, tmp_path, capsys, monkeypatch,
                                                  traceback):
    from compiler.cli import compile as compile_cmd

    _, path = mlp_onnx
    monkeypatch.setattr(compile_cmd, "plan", _fails(ZeroDivisionError("division by zero")))
    if traceback:
        monkeypatch.setenv("KILN_TRACEBACK", "1")
    else:
        monkeypatch.delenv("KILN_TRACEBACK", raising=False)
    assert main(["compile", path, "-o", str(tmp_path / "m.so"), "--input-shape", "x:2,32",
                 "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    line = ("error: internal error in optimizing: folding weights and batch norms, fusing "
            "operators into kernels: ZeroDivisionError: division by zero")
    if traceback:
        assert err[0].startswith("Traceback") and err[-1] == line, err
    else:
        assert err == [line + " (set KILN_TRACEBACK=1 for the traceback)"], err


def test_an_internal_error_of_the_compiler_gets_the_hint(mlp_onnx, tmp_path, capsys,
                                                          monkeypatch):
    from compiler.cli import compile as compile_cmd
    from compiler.ir.errors import InternalError

    _, path = mlp_onnx
    monkeypatch.delenv("KILN_TRACEBACK", raising=False)
    monkeypatch.setattr(compile_cmd, "build_from_plan", _fails(InternalError("bad invariant")))
    assert main(["compile", path, "-o", str(tmp_path / "m.so"), "--input-shape", "x:2,32",
                 "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: internal error in generating code for ")
    assert err[0].endswith(": InternalError: bad invariant (set KILN_TRACEBACK=1 for the "
                           "traceback)")

