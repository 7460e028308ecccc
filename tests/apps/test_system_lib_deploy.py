"""apps/system_lib_deploy: a C program linking a --system-lib static library with the
dlopen-free runtime; it runs with no Python and no dlopen and prints the right results."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "system_lib_deploy")
RUNTIME = os.path.join(ROOT, "build", "libmicroruntime_nodl.a")


@pytest.fixture(scope="module")
def runtime_archive():
    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime_nodl.a"], check=True)
    return RUNTIME


def _targets():
    sys.path.insert(0, ROOT)
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


@pytest.mark.parametrize("target", _targets())
def test_system_lib_app(tmp_path, runtime_archive, target):
    kernels = str(tmp_path / "kernels.a")
    subprocess.run([sys.executable, os.path.join(APP, "build_kernels.py"), kernels, target],
                   check=True, stdout=subprocess.PIPE)
    app = str(tmp_path / "app")
    subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-I" + os.path.join(ROOT, "microruntime", "include"),
                    os.path.join(APP, "main.c"), kernels, runtime_archive, "-lpthread", "-lm",
                    "-o", app], check=True)
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    assert "dlopen" not in undefined and "dlsym" not in undefined
    out = subprocess.run([app], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=dict(os.environ, MR_NUM_THREADS="2"), check=False)
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert lines[0] == "vadd: 0 3 6 9 12 15 18 21 24 27"
    assert lines[1].startswith("mm: 64x64 checksum 54978.5") and lines[1].endswith(" OK")
    assert "ValueError: Mismatched C.ndim on argument #2" in out.stdout
