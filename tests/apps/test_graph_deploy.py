"""apps/graph_deploy: a model exported as one file runs from C through the graph executor's C
API, both as a `--system-lib` static library linked with the dlopen-free runtime (no dlopen
at all) and as a shared library the program dlopens; the output matches numpy."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "graph_deploy", "main.c")
sys.path.insert(0, os.path.join(ROOT, "tests", "microruntime"))
import graph_model as gm  # noqa: E402


def _targets():
    sys.path.insert(0, ROOT)
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


@pytest.fixture(scope="module")
def runtime_archives():
    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime_nodl.a",
                    "build/libmicroruntime.a"], check=True)
    return (os.path.join(ROOT, "build", "libmicroruntime_nodl.a"),
            os.path.join(ROOT, "build", "libmicroruntime.a"))


def _run(app, model, tmp_path, x, y):
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    out = subprocess.run([app, model, f"x={tmp_path / 'x.bin'}", f"y={tmp_path / 'y.bin'}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return np.array([float(v) for v in out.stdout.split()], "float32").reshape(gm.N, gm.M), out


@pytest.mark.parametrize("target", _targets())
def test_graph_deploy(tmp_path, runtime_archives, target):
    from compiler.relay import GraphExecutorFactoryModule

    x, y, w = gm.data(5)
    include = "-I" + os.path.join(ROOT, "microruntime", "include")
    cflags = ["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", include]

    static = GraphExecutorFactoryModule(gm.graph_json(), gm.kernels(f"{target} --system-lib"),
                                        {"w": w})
    model_a = str(tmp_path / "model.a")
    static.export_library(model_a)
    app = str(tmp_path / "app_static")
    subprocess.run(cflags + ["-DGRAPH_DEPLOY_SYSTEM_LIB", APP, model_a, runtime_archives[0],
                             "-lpthread", "-lm", "-o", app], check=True)
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    assert "dlopen" not in undefined and "dlsym" not in undefined
    got, _ = _run(app, "-", tmp_path, x, y)
    np.testing.assert_allclose(got, gm.reference(x, y, w), rtol=1e-5, atol=1e-5)

    shared = GraphExecutorFactoryModule(gm.graph_json(), gm.kernels(target), {"w": w})
    model_so = str(tmp_path / "model.so")
    shared.export_library(model_so)
    app = str(tmp_path / "app_dl")
    subprocess.run(cflags + [APP, runtime_archives[1], "-o", app, "-rdynamic", "-ldl",
                             "-lpthread", "-lm"], check=True)
    got, _ = _run(app, model_so, tmp_path, x, y)
    np.testing.assert_allclose(got, gm.reference(x, y, w), rtol=1e-5, atol=1e-5)
    bad = subprocess.run([app, model_so, f"q={tmp_path / 'x.bin'}"], stderr=subprocess.PIPE,
                         text=True, check=False)
    assert bad.returncode == 1 and "the graph has no input named 'q'" in bad.stderr
