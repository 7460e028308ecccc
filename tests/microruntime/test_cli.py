"""`python -m microruntime run` / `manifest`: run a compiled model from the command line
without importing the compiler; outputs, top-k, profile, benchmark, and one-line errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs the command line in a fresh process and fails if any compiler module was imported.
DRIVER = ("import sys; from microruntime.__main__ import main; rc = main(sys.argv[1:]); "
          "bad = [m for m in sys.modules if m == 'compiler' or m.startswith('compiler.')]; "
          "assert not bad, bad; sys.exit(rc)")


def cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", DRIVER, *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    sys.path.insert(0, ROOT)
    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=3)
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    d = tmp_path_factory.mktemp("mrcli")
    so = str(d / "mlp.so")
    factory = relay.build(mod, target="llvm", params=params)
    factory.export_library(so)
    factory.export_library(str(d / "mlp.tar"))
    x = m.inputs(seed=4)["x"]
    import onnxruntime as ort

    want, = ort.InferenceSession(m.model.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.savez(d / "in.npz", x=x)
    return d, so, want


def test_run_inputs_output_top(model):
    d, so, want = model
    r = cli("run", so, "--inputs", str(d / "in.npz"), "--output", str(d / "out.npz"),
            "--print-top", "2")
    assert r.returncode == 0, r.stderr
    got = np.load(d / "out.npz")["output_0"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert "output 0: float32[3,10]" in r.stdout
    top = np.argsort(-want[0], kind="stable")[:2]
    assert f"top 2 of output 0 row 0: [{top[0]}] " in r.stdout
    assert f"  [{top[1]}] " in r.stdout.split("row 0:")[1].splitlines()[0]


def test_random_inputs_profile_benchmark(model):
    _, so, _ = model
    r = cli("run", so, "--profile", "--benchmark", "--repeat", "2", "--number", "3",
            "--warmup-ms", "0")
    assert r.returncode == 0, r.stderr
    assert "no --inputs: random inputs (seed 0): x float32[3,32]" in r.stderr
    assert "Duration (us)" in r.stdout and "fused_" in r.stdout
    assert "latency (2 x 3 runs" in r.stdout


def test_manifest_still_works(model):
    _, so, _ = model
    r = cli("manifest", so)
    assert r.returncode == 0 and "input  x: float32[3, 32]" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "{d}/nope.so"], "error: no such model file: "),
    (["run", "{so}", "--inputs", "{d}/nope.npz"], "error: no such inputs file: "),
    (["run", "{so}", "--inputs", "{d}/bad.npz"],
     "error: input 'x' of {d}/bad.npz is float32[2, 32]; the model expects float32[3, 32]"),
    (["run", "{so}", "--inputs", "{d}/other.npz"], "error: {d}/other.npz holds y; the model's "),
    (["run", "{d}/in.npz"], "error: {d}/in.npz: no GraphExecutorFactory module"),
    (["run", "{d}/m.a"], "error: {d}/m.a: a static library"),
    (["run", "{so}", "--inputs", "{d}/corrupt.npz"],
     "error: {d}/corrupt.npz: not a readable .npz file (File is not a zip file): --inputs takes "
     "a .npz file"),
    (["run", "{so}", "--inputs", "{d}/x.npy"],
     "error: {d}/x.npy is a .npy file (one unnamed array): --inputs takes a .npz file"),
    (["run", "{so}", "--inputs", "{d}/in.npz", "--seed", "3"],
     "error: --seed seeds random inputs; it does nothing with --inputs"),
    (["run", "{so}", "--output", "{d}/nodir/out.npz"], "error: --output {d}/nodir/out.npz: no "
     "such directory"),
    (["run", "{so}", "--input-shape", "x:3,32"], "error: --input-shape is for Relax VM models"),
    (["run", "{so}", "--device", "tpu"], "error: --device tpu: unknown device type 'tpu'"),
    (["run", "{so}", "--benchmark", "--warmup-ms", "-1"],
     "error: --warmup-ms -1: give a time of at least 0 ms"),
    (["run", "{so}", "--device", "cuda:7"], "error: --device cuda:7: no such device on this "
     "machine (cuda(7) does not exist"),
])
def test_one_line_errors(model, args, message):
    d, so, _ = model
    np.savez(d / "bad.npz", x=np.zeros((2, 32), "float32"))
    np.savez(d / "other.npz", y=np.zeros((3, 32), "float32"))
    (d / "m.a").write_bytes(b"!<arch>\n")
    (d / "corrupt.npz").write_bytes(b"PK\x03\x04" + b"\x00garbage" * 8)
    np.save(d / "x.npy", np.zeros((3, 32), "float32"))
    r = cli(*[a.format(d=d, so=so) for a in args])
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(d=d)), r.stderr


def test_help_and_usage():
    r = cli("run", "--help")
    assert r.returncode == 0 and "--inputs" in r.stdout and "examples:" in r.stdout
    r = cli("frobnicate")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_output_is_written_to_the_name_given(model):
    d, so, want = model
    out = d / "plain_name"
    r = cli("run", so, "--inputs", str(d / "in.npz"), "--output", str(out))
    assert r.returncode == 0, r.stderr
    assert f"outputs saved to {out}\n" in r.stdout
    assert not os.path.exists(str(out) + ".npz")
    np.testing.assert_allclose(np.load(out)["output_0"], want, rtol=1e-5, atol=1e-6)


def test_random_inputs_follow_the_seed(model):
    d, so, _ = model
    outs = []
    for seed in ("5", "5", "6"):
        out = d / f"seed{len(outs)}.npz"
        r = cli("run", so, "--seed", seed, "--output", str(out))
        assert r.returncode == 0 and f"random inputs (seed {seed})" in r.stderr, r.stderr
        outs.append(np.load(out)["output_0"])
    np.testing.assert_array_equal(outs[0], outs[1])
    assert not np.array_equal(outs[0], outs[2])


def test_manifest_of_a_tar(model):
    d, _, _ = model
    r = cli("manifest", str(d / "mlp.tar"))
    assert r.returncode == 0, r.stderr
    assert "input  x: float32[3, 32]" in r.stdout and "kernels: 3" in r.stdout


# ---- a Relax VM model: y = a - b with a symbolic batch -------------------------------------
@pytest.fixture(scope="module")
def vm_model(tmp_path_factory):
    sys.path.insert(0, ROOT)
    import onnx
    from onnx import TensorProto, helper

    from compiler.cli import main as compile_main

    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 4]) for n in "aby"]
    graph = helper.make_graph([helper.make_node("Sub", ["a", "b"], ["y"])], "sub", vi[:2],
                              vi[2:])
    d = tmp_path_factory.mktemp("mrcli_vm")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(d / "sub.onnx"))
    assert compile_main(["compile", str(d / "sub.onnx"), "-o", str(d / "sub.so"), "-q"]) == 0
    assert compile_main(["compile", str(d / "sub.onnx"), "-o", str(d / "sub.tar"), "-q"]) == 0
    a = np.arange(8, dtype="float32").reshape(2, 4) * 3
    b = np.ones((2, 4), "float32")
    np.savez(d / "ba.npz", b=b, a=a)   # b first: binding is by name, not by file order
    np.savez(d / "abc.npz", a=a, b=b, c=b)
    np.savez(d / "a.npz", a=a)
    return d, str(d / "sub.so"), a - b


def test_vm_binds_inputs_by_name(vm_model):
    d, so, want = vm_model
    r = cli("run", so, "--inputs", str(d / "ba.npz"), "--output", str(d / "out.npz"),
            "--print-top", "2", "--profile", "--benchmark", "--repeat", "2", "--number", "3")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(d / "out.npz")["output_0"], want)
    assert "output 0: float32[2,4]" in r.stdout
    assert "top 2 of output 0 row 1: [3] 20  [2] 17" in r.stdout
    assert "Duration (us)" in r.stdout and "fused_subtract" in r.stdout
    assert "Executor: VM" in r.stdout
    assert "latency (2 x 3 runs" in r.stdout


def test_vm_random_inputs_of_given_shapes(vm_model):
    d, so, _ = vm_model
    out = d / "random.npz"
    r = cli("run", so, "--input-shape", "a:3,4", "--input-shape", "b:3,4", "--seed", "7",
            "--output", str(out))
    assert r.returncode == 0, r.stderr
    assert "random inputs (seed 7): a float32[3,4], b float32[3,4]" in r.stderr
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal((3, 4)).astype("float32")
    np.testing.assert_array_equal(np.load(out)["output_0"], a - b)


def test_vm_manifest_lists_functions(vm_model):
    d, so, _ = vm_model
    for path in (so, str(d / "sub.tar")):
        r = cli("manifest", path)
        assert r.returncode == 0, r.stderr
        assert "a Relax VM executable" in r.stdout and "function main(a, b)" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--inputs", "{d}/abc.npz"],
     "error: {d}/abc.npz holds a, b, c; the parameters of main are a, b (unknown c)"),
    (["--inputs", "{d}/a.npz"],
     "error: {d}/a.npz holds a; the parameters of main are a, b (missing b)"),
    ([], "error: {so} is a Relax VM model (its input shapes may be symbolic): give its inputs "
         "with --inputs FILE.npz (arrays named a, b) or their shapes with --input-shape"),
    (["--input-shape", "a:2,4", "--input-shape", "c:2,4"], "error: {so} is a Relax VM model"),
    (["--input-shape", "a:2,4", "--input-shape", "b:3,4"], "error: ErrorContext(fn=main, "
     "loc=param[1], param=b"),
    (["--input-shape", "a:2,x"], "error: bad --input-shape 'a:2,x'"),
])
def test_vm_one_line_errors(vm_model, args, message):
    d, so, _ = vm_model
    r = cli("run", so, *[a.format(d=d) for a in args])
    assert r.returncode == 1
    lines = [line for line in r.stderr.strip().splitlines()
             if not line.startswith("no --inputs: random inputs")]
    assert len(lines) == 1 and lines[0].startswith(message.format(d=d, so=so)), r.stderr


# ---- failures that are no user mistake ------------------------------------------------------
def _broken_print(*_args, **_kwargs):
    raise ZeroDivisionError("integer division or modulo by zero")


@pytest.mark.parametrize("traceback", [False, True])
def test_unexpected_error_is_one_line_with_a_hint(model, monkeypatch, capsys, traceback):
    from microruntime import __main__ as cli_main

    _, so, _ = model
    monkeypatch.setattr(cli_main, "_print_outputs", _broken_print)
    if traceback:
        monkeypatch.setenv("KILN_TRACEBACK", "1")
    else:
        monkeypatch.delenv("KILN_TRACEBACK", raising=False)
    assert cli_main.main(["run", so]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    line = "error: internal error in running the model: ZeroDivisionError: integer division or " \
        "modulo by zero"
    if traceback:
        assert err[1].startswith("Traceback") and err[-1] == line
    else:
        assert err[-1] == line + " (set KILN_TRACEBACK=1 for the traceback)"
        assert not any("Traceback" in e for e in err)
