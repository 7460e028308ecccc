"""apps/graph_deploy on bad input: a FIFO given as an input file or as the model is refused at
once (it blocked forever), an output index that is not a number is a command-line error (it
was taken as 0), a bad output index leaks nothing, and a static model whose blob length
fields were raised together is refused (the reader ran past the blob: SIGSEGV)."""
import os
import shutil
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "graph_deploy", "main.c")
sys.path.insert(0, os.path.join(ROOT, "tests", "microruntime"))
import graph_model as gm  # noqa: E402

CFLAGS = ["cc", "-std=c99", "-O2", "-g", "-Wall", "-Wextra", "-Werror",
          "-I" + os.path.join(ROOT, "microruntime", "include")]


@pytest.fixture(scope="module")
def static_app(tmp_path_factory):
    """(app, the model's .a, its library blob): the model linked in, no dlopen; kernels for
    a generic CPU, which valgrind runs."""
    from compiler.relay import GraphExecutorFactoryModule

    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime_nodl.a"], check=True)
    tmp = tmp_path_factory.mktemp("graph_deploy")
    _, _, w = gm.data(5)
    kernels = gm.kernels("c -mcpu=generic --system-lib")
    factory = GraphExecutorFactoryModule(gm.graph_json(), kernels, {"w": w})
    model_a = str(tmp / "model.a")
    factory.export_library(model_a)
    blob = factory.lib._library_parts(root=factory._serialized).library_bin
    return _link(model_a, str(tmp / "app")), model_a, blob


def _link(model_a, app):
    subprocess.run(CFLAGS + ["-DGRAPH_DEPLOY_SYSTEM_LIB", APP, model_a,
                             os.path.join(ROOT, "build", "libmicroruntime_nodl.a"),
                             "-lpthread", "-lm", "-o", app], check=True)
    return app


def _inputs(tmp_path):
    x, y, _ = gm.data(5)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    return [f"x={tmp_path / 'x.bin'}", f"y={tmp_path / 'y.bin'}"]


def _run(args, **kwargs):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120, check=False, **kwargs)


def test_fifo_input_is_refused(static_app, tmp_path):
    app, _, _ = static_app
    fifo = tmp_path / "x.fifo"
    os.mkfifo(fifo)
    out = _run([app, "-", f"x={fifo}"])
    assert out.returncode == 1
    assert f"{fifo}: not a regular file" in out.stderr


def test_fifo_model_is_refused(tmp_path):
    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime.a"], check=True)
    app = str(tmp_path / "app_dl")
    subprocess.run(CFLAGS + [APP, os.path.join(ROOT, "build", "libmicroruntime.a"), "-o", app,
                             "-rdynamic", "-ldl", "-lpthread", "-lm"], check=True)
    fifo = tmp_path / "model.so"
    os.mkfifo(fifo)
    out = _run([app, str(fifo)])
    assert out.returncode == 1
    assert f"cannot load library '{fifo}': not a regular file" in out.stderr


def test_output_index_must_be_a_number(static_app, tmp_path):
    app, _, _ = static_app
    for bad in ("abc", "1x", "-1", ""):
        out = _run([app, "-"] + _inputs(tmp_path) + [bad])
        assert out.returncode == 2, (bad, out.stdout[:200])
        assert f"'{bad}' is neither NAME=FILE nor an output index" in out.stderr
    out = _run([app, "-"] + _inputs(tmp_path) + ["0"])
    assert out.returncode == 0 and len(out.stdout.split()) == gm.N * gm.M


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_bad_output_index_leaks_nothing(static_app, tmp_path):
    app, _, _ = static_app
    # The app is a plain build: no sanitizer runtime preloaded under valgrind (make test-asan
    # preloads ASan into the test process).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = _run(["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
                "--error-exitcode=99", app, "-"] + _inputs(tmp_path) + ["7"],
               env=dict(env, MR_NUM_THREADS="1"))
    assert out.returncode == 1, out.stderr[-2000:]
    assert "output index 7 is out of range (1 outputs)" in out.stderr


def test_static_blob_length_edits_are_refused(static_app, tmp_path):
    """nbytes and the factory payload's length raised together by 1 MiB: only the blob's
    size as registered with it tells the runtime where the blob ends."""
    _, model_a, blob = static_app
    with open(model_a, "rb") as f:
        data = bytearray(f.read())
    at = data.find(blob)
    assert at >= 0
    kind = struct.pack("<Q", 20) + b"GraphExecutorFactory"
    payload_len = at + blob.index(kind) + len(kind)
    grow = 1 << 20
    struct.pack_into("<Q", data, at, struct.unpack_from("<Q", data, at)[0] + grow)
    struct.pack_into("<Q", data, payload_len,
                     struct.unpack_from("<Q", data, payload_len)[0] + grow)
    edited = str(tmp_path / "edited.a")
    with open(edited, "wb") as f:
        f.write(data)
    app = _link(edited, str(tmp_path / "app_edited"))
    out = _run([app, "-"] + _inputs(tmp_path))
    assert out.returncode == 1, (out.returncode, out.stderr[-500:])
    assert "system library: library blob: nbytes" in out.stderr
    assert "exceeds the blob's size" in out.stderr
