"""Run with a Python that has Apache TVM: loads the Kiln-built libraries listed in
argv[1]/manifest.json with `tvm.runtime.load_module`, calls them with TVM tensors and writes
argv[1]/results.json: {"tvm_version": ..., "cases": {case_id: {"ok": bool, "error": str, ...}}}.
With argv[2] = a case id, only that case runs and the file is results_<id>.json (the test runs
one process per case, so a crash in one library is reported as that case's failure).

Each case is checked on its own (a failure of one does not hide the others), and what is
checked is described by the manifest, which test_kiln_in_tvm.py writes:
  {"id": ..., "path": ..., "func": ..., "kind": "add" | "par" | "ws"}
kind "add": C = A + B over several lengths (symbolic n), mod["main"] too, and a wrong dtype /
wrong shape must raise a TVM error whose text is Kiln's ("Mismatched ..." naming the argument).
kind "par": C = A + 1 (split + parallel) over several lengths, including more than one chunk.
kind "ws":  C[i] = 2 * A[n-1-i] + 1 with a 16 KiB intermediate (a workspace), called repeatedly.
kind "blob": the add kernel plus an imported "test.echo" module in the library blob; the echo
loader (tests/compiler/build/echo_module.py) is registered with TVM before loading, and the
import's `echo` must return the manifest's "payload".
"""
import ctypes
import json
import os
import sys
import traceback

import numpy as np
import tvm
import tvm_ffi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compiler",
                                "build"))
from echo_module import register_echo_loader  # noqa: E402

DEV = tvm.cpu(0)


def tensor(x):
    make = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    return make(x, DEV)


def empty(shape, dtype="float32"):
    return tensor(np.zeros(shape, dtype))


def expect_error(f, args, needles):
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001
        text = str(e)
        missing = [s for s in needles if s not in text]
        if missing:
            raise AssertionError(f"TVM error {type(e).__name__} lacks {missing!r}: {text!r}") from e
        return [type(e).__name__, text]
    raise AssertionError(f"no error raised for {needles!r}")


def check_add(mod, func, info):
    f = mod[func]
    rng = np.random.default_rng(0)
    for n in (1, 7, 64, 1000):
        a = rng.standard_normal(n).astype("float32")
        b = np.arange(n, dtype="float32")
        c = empty((n,))
        f(tensor(a), tensor(b), c)
        np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)
    b = np.arange(5, dtype="float32")
    c = empty((5,))
    mod["main"](tensor(b), tensor(b), c)  # __tvm_ffi_main forwards to the single function
    np.testing.assert_allclose(c.numpy(), 2 * b)
    f32 = tensor(np.zeros(4, "float32"))
    info["dtype_error"] = expect_error(
        f, [tensor(np.zeros(4, "float64")), f32, empty((4,))],
        ["Mismatched A.dtype on argument #0", "expected float32"])
    info["shape_error"] = expect_error(
        f, [f32, tensor(np.zeros(5, "float32")), empty((4,))],
        ["Mismatched B.shape[0] on argument #1"])


def check_par(mod, func, info):
    f = mod[func]
    info["slots"] = context_slots(info["path"], ["__TVMBackendParallelLaunch"])
    for n in (1, 63, 64, 65, 10000):
        a = np.arange(n, dtype="float32")
        c = empty((n,))
        f(tensor(a), c)
        np.testing.assert_array_equal(c.numpy(), a + 1)


def check_ws(mod, func, info):
    f = mod[func]
    info["slots"] = context_slots(info["path"], ["__TVMBackendAllocWorkspace",
                                                 "__TVMBackendFreeWorkspace"])
    a = np.random.default_rng(1).standard_normal(4096).astype("float32")
    c = empty((4096,))
    for _ in range(3):  # TVM's workspace pool is LIFO and reused call after call
        f(tensor(a), c)
        np.testing.assert_allclose(c.numpy(), a[::-1] * 2 + 1, rtol=1e-6)
    info["shape_error"] = expect_error(
        f, [tensor(np.zeros(4095, "float32")), c], ["Mismatched A.shape[0] on argument #0"])


def context_slots(path, names):
    """{slot: True if TVM's loader filled it with the matching TVM function}: the library is
    already open (load_module dlopens it), so RTLD_NOLOAD returns that same handle."""
    lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    process = ctypes.CDLL(None)
    filled = {}
    for name in names:
        value = ctypes.c_void_p.in_dll(lib, name).value
        try:
            want = ctypes.cast(getattr(process, name[2:]), ctypes.c_void_p).value
        except AttributeError:
            want = None
        filled[name] = bool(value) and (want is None or value == want)
    return filled


def check_blob(mod, func, info):
    a = np.arange(16, dtype="float32")
    c = empty((16,))
    mod[func](tensor(a), tensor(a), c)
    np.testing.assert_array_equal(c.numpy(), 2 * a)
    imports = list(mod.imports)  # TVM 0.27 (tvm_ffi.Module); classic TVM: imported_modules
    info["imports"] = [m.kind for m in imports]
    if len(imports) != 1:
        raise AssertionError(f"expected one imported module, got {imports!r}")
    payload = bytes.fromhex(info["payload"])
    got = bytes(imports[0]["echo"]())
    if got != payload:
        raise AssertionError(f"echo returned {got!r}, expected {payload!r}")


CHECKS = {"add": check_add, "par": check_par, "ws": check_ws, "blob": check_blob}


def main(out, only=None):
    with open(os.path.join(out, "manifest.json")) as fh:
        cases = [c for c in json.load(fh) if only is None or c["id"] == only]
    results = {"tvm_version": tvm.__version__, "cases": {}}
    for case in cases:
        info = {"ok": False, "path": case["path"], "payload": case.get("payload")}
        try:
            if case["kind"] == "blob":
                register_echo_loader(tvm_ffi.register_global_func, tvm.runtime.load_module)
            mod = tvm.runtime.load_module(case["path"])
            CHECKS[case["kind"]](mod, case["func"], info)
            info["ok"] = True
        except Exception as e:  # noqa: BLE001
            info["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}"
        results["cases"][case["id"]] = info
    name = "results.json" if only is None else f"results_{only}.json"
    with open(os.path.join(out, name), "w") as fh:
        json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
