"""apps/vm_deploy: a Relax VM model with a symbolic batch, compiled once, runs from C through
the VM's C API for several batch sizes: as a `--system-lib` static library linked with the
dlopen-free runtime (no dlopen at all) and as a shared library the program dlopens. Outputs
match numpy (rtol = atol = 1e-4)."""
import os
import subprocess

import numpy as np
import pytest

from compiler import relax
from compiler.relax.testing import vm_models

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "vm_deploy", "main.c")
CFLAGS = ["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
          "-I" + os.path.join(ROOT, "microruntime", "include")]


@pytest.fixture(scope="module")
def runtime_archives():
    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime_nodl.a",
                    "build/libmicroruntime.a"], check=True)
    return (os.path.join(ROOT, "build", "libmicroruntime_nodl.a"),
            os.path.join(ROOT, "build", "libmicroruntime.a"))


def _run(app, model, tmp_path, x, function="main"):
    path = tmp_path / f"x{x.shape[0]}.bin"
    x.tofile(path)
    return subprocess.run([app, model, function, f"{path}:{'x'.join(map(str, x.shape))}"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)


def _output(proc):
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[0] == "shape"
    shape = tuple(int(d) for d in lines[1].split("x"))
    return np.array([float(v) for v in lines[2:]], "float32").reshape(shape)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_vm_deploy(tmp_path, runtime_archives, target):
    prog = vm_models.mlp(hidden=16)

    model_a = str(tmp_path / "model.a")
    relax.build(prog.mod, f"{target} --system-lib", params=prog.params).export_library(model_a)
    app = str(tmp_path / "app_static")
    subprocess.run(CFLAGS + ["-DVM_DEPLOY_SYSTEM_LIB", APP, model_a, runtime_archives[0],
                             "-lpthread", "-lm", "-o", app], check=True)
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    assert "dlopen" not in undefined and "dlsym" not in undefined
    for n in (1, 7):
        (x,) = prog.args(n=n)
        np.testing.assert_allclose(_output(_run(app, "-", tmp_path, x)), prog.reference(x),
                                   rtol=1e-4, atol=1e-4)

    model_so = str(tmp_path / "model.so")
    relax.build(prog.mod, target, params=prog.params).export_library(model_so)
    app = str(tmp_path / "app_dl")
    subprocess.run(CFLAGS + [APP, runtime_archives[1], "-o", app, "-rdynamic", "-ldl",
                             "-lpthread", "-lm"], check=True)
    (x,) = prog.args(n=3)
    np.testing.assert_allclose(_output(_run(app, model_so, tmp_path, x)), prog.reference(x),
                               rtol=1e-4, atol=1e-4)
    # A wrong feature size is refused by the executable's entry check, naming the parameter.
    bad = _run(app, model_so, tmp_path, np.zeros((2, 5), "float32"))
    assert bad.returncode == 1 and "x" in bad.stderr and "784" in bad.stderr, bad.stderr
    assert "no function 'nope'" in _run(app, model_so, tmp_path, x, "nope").stderr
