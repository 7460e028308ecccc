"""Where Apache TVM runs for the interop tests: a Python that can `import tvm` (this one, or
$KILN_TVM_PYTHON). TVM always runs in a subprocess: libtvm_ffi and microruntime export the same
C symbols, so the two runtimes are never loaded into one process."""
import importlib.util
import os
import subprocess
import sys

import pytest


def _tvm_python():
    if importlib.util.find_spec("tvm") is not None:
        return sys.executable
    candidate = os.environ.get("KILN_TVM_PYTHON")
    if candidate and subprocess.run([candidate, "-c", "import tvm"],
                                    capture_output=True).returncode == 0:
        return candidate
    return None


TVM_PYTHON = _tvm_python()

requires_tvm = pytest.mark.skipif(
    TVM_PYTHON is None,
    reason="Apache TVM is not importable: pip install apache-tvm==0.27.0.post1 "
           "(or set KILN_TVM_PYTHON to a python that has it)")
