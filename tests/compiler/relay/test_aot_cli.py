"""`python -m compiler compile --executor aot`: an ONNX model -> a system library with its
run function and, beside it, tvmgen_default.h; a model with symbolic dims is refused."""
import os
import subprocess
import sys

import onnx

from compiler.frontend.testing import onnx_models

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))


def _compile(*args):
    return subprocess.run([sys.executable, "-m", "compiler", "compile", *args, "-q"],
                          cwd=ROOT, capture_output=True, text=True)


def test_cli_writes_library_and_header(tmp_path):
    path = str(tmp_path / "mlp.onnx")
    onnx.save(onnx_models.mlp().model, path)
    out = str(tmp_path / "model.a")
    proc = _compile(path, "--executor", "aot", "--target", "c", "--input-shape", "x:1,32",
                    "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "executor: AOT: tvmgen_default_run" in proc.stdout
    header = (tmp_path / "tvmgen_default.h").read_text()
    assert "int32_t tvmgen_default_run(" in header and "TVMGEN_DEFAULT_X_SIZE 128" in header
    nm = subprocess.run(["nm", out], capture_output=True, text=True).stdout
    assert " T tvmgen_default_run" in nm

    proc = _compile(path, "--executor", "aot", "-o", str(tmp_path / "m.so"))
    assert proc.returncode == 1 and "--executor aot runs one sequence" in proc.stderr
