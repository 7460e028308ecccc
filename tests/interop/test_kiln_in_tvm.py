"""Compiler half of the interop with Apache TVM 0.27: libraries Kiln builds and exports
(`export_library("x.so")`) load and run in Apache TVM (`tvm.runtime.load_module`).

For each Kiln host target ("c", and "llvm" when llvmlite is there) four libraries are built:
an elementwise add over a symbolic length, a split + parallel loop (TVM's loader fills the
`__TVMBackendParallelLaunch` slot with its thread pool), and a two-stage kernel whose 16 KiB
intermediate goes through TVMBackendAllocWorkspace, and the add kernel with an imported
module of the test-only kind "test.echo" packed into the library blob. TVM runs in a subprocess
(tvm_run_kiln.py), one per library: libtvm_ffi and microruntime export the same C symbols, so
the two runtimes are never loaded into one process (the Kiln build itself loads microruntime
here).
"""
import json
import os
import subprocess

import pytest
from tvm_subprocess import TVM_PYTHON, requires_tvm

HERE = os.path.dirname(os.path.abspath(__file__))
pytestmark = requires_tvm


def _llvm_available():
    try:
        import compiler.codegen.llvm  # noqa: F401
    except ImportError:
        return False
    return True


TARGETS = [
    "c",
    pytest.param("llvm", marks=pytest.mark.skipif(
        not _llvm_available(), reason="compiler.codegen.llvm is not importable (needs llvmlite)")),
]


def add_kernel():
    from compiler import te
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    B = te.placeholder((n,), "float32", name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), [A, B, C], "add"


def par_kernel():
    from compiler import te
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    C = te.compute((n,), lambda i: A[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    outer, _ = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(outer)
    return s, [A, C], "add_par"


def ws_kernel():
    from compiler import te
    n = 4096  # the intermediate T (16 KiB) is not an argument: a workspace
    A = te.placeholder((n,), "float32", name="A")
    T = te.compute((n,), lambda i: A[i] * 2.0, name="T")
    C = te.compute((n,), lambda i: T[n - 1 - i] + 1.0, name="C")
    return te.create_schedule(C.op), [A, C], "ws"


KERNELS = {"add": add_kernel, "par": par_kernel, "ws": ws_kernel, "blob": add_kernel}
# What the test-only module kind "test.echo" (tests/compiler/build/echo_module.py) carries in
# the library blob of the "blob" case; tvm_run_kiln.py checks it comes back.
ECHO_PAYLOAD = b"kiln\x00echo\xff" * 3


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("kiln_in_tvm")


def _run_in_tvm(out_dir, target, kind):
    import compiler

    schedule, args, func = KERNELS[kind]()
    m = compiler.build(schedule, args, target=target, name=func)
    if kind == "blob":
        from compiler.runtime_module import SerializedModule

        m.import_module(SerializedModule("test.echo", ECHO_PAYLOAD))
    case_id = f"{kind}_{target}"
    path = str(out_dir / f"{case_id}.so")
    m.export_library(path)
    manifest = out_dir / "manifest.json"
    cases = json.loads(manifest.read_text()) if manifest.exists() else []
    cases = [c for c in cases if c["id"] != case_id]
    cases.append({"id": case_id, "path": path, "func": func, "kind": kind,
                  "payload": ECHO_PAYLOAD.hex()})
    manifest.write_text(json.dumps(cases))
    proc = subprocess.run([TVM_PYTHON, os.path.join(HERE, "tvm_run_kiln.py"), str(out_dir),
                           case_id], capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"TVM process for {path} exited with {proc.returncode}:\n{proc.stderr[-3000:]}")
    with open(out_dir / f"results_{case_id}.json") as fh:
        result = json.load(fh)["cases"][case_id]
    assert result["ok"], f"{path} in Apache TVM:\n{result.get('error')}"
    return result


@pytest.mark.parametrize("target", TARGETS)
def test_elementwise_add_symbolic_length(out_dir, target):
    result = _run_in_tvm(out_dir, target, "add")
    # Kiln's own argument checks raise through TVM with their message intact
    kind, text = result["dtype_error"]
    assert kind == "TypeError" and "Mismatched A.dtype on argument #0" in text, result
    assert "`add(A, B, C)`" in text and "expected float32, but got float64" in text, text
    kind, text = result["shape_error"]
    assert kind == "ValueError" and "Mismatched B.shape[0] on argument #1" in text, result


@pytest.mark.parametrize("target", TARGETS)
def test_parallel_loop(out_dir, target):
    result = _run_in_tvm(out_dir, target, "par")
    # the kernel would fall back to a serial loop if TVM's loader had not filled the slot
    assert result["slots"] == {"__TVMBackendParallelLaunch": True}, result


@pytest.mark.parametrize("target", TARGETS)
def test_workspace(out_dir, target):
    result = _run_in_tvm(out_dir, target, "ws")
    assert result["slots"] == {"__TVMBackendAllocWorkspace": True,
                               "__TVMBackendFreeWorkspace": True}, result
    kind, text = result["shape_error"]
    assert kind == "ValueError" and "Mismatched A.shape[0] on argument #0" in text, result


@pytest.mark.parametrize("target", TARGETS)
def test_library_blob_import(out_dir, target):
    """One .so with an imported module in __tvm_ffi__library_bin: TVM decodes the blob with
    its own `ffi.Module.load_from_bytes.test.echo` and both functions are reachable."""
    result = _run_in_tvm(out_dir, target, "blob")
    # the echo loader returns the module of a library it compiled: TVM's kind "library"
    assert result["imports"] == ["library"], result
