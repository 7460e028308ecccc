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
    relay.build(mod, target="llvm", params=params).export_library(so)
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
    r = cli("run", so, "--profile", "--benchmark", "--repeat", "2", "--number", "3")
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
])
def test_one_line_errors(model, args, message):
    d, so, _ = model
    np.savez(d / "bad.npz", x=np.zeros((2, 32), "float32"))
    np.savez(d / "other.npz", y=np.zeros((3, 32), "float32"))
    (d / "m.a").write_bytes(b"!<arch>\n")
    r = cli(*[a.format(d=d, so=so) for a in args])
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(d=d)), r.stderr


def test_help_and_usage():
    r = cli("run", "--help")
    assert r.returncode == 0 and "--inputs" in r.stdout and "examples:" in r.stdout
    r = cli("frobnicate")
    assert r.returncode == 2 and "Traceback" not in r.stderr
