"""Loading device modules never needs a driver: the payload is parsed and checked in full at
load, and every malformed payload (truncated, bad counts, unknown tags, wrong format) is a
ValueError naming the problem, never a crash."""
import numpy as np
import pytest
from devmod_bytes import FLOAT32, HANDLE, INT32, payload, string, u64

import microruntime as mr

GOOD = payload("cl", [("k", [HANDLE, INT32, FLOAT32], ["blockIdx.x", "threadIdx.x"]),
                      ("k2", [], ["threadIdx.y", "tir.use_dyn_shared_memory"])],
               "__kernel void k(__global int* a, int b, float c) {}")


def load(kind, data):
    return mr.get_global_func(f"ffi.Module.load_from_bytes.{kind}")(data)


def test_good_payload_loads_without_a_driver():
    mod = load("opencl", GOOD)
    assert mod.type_key == "opencl" and mod.implements_function("k2")
    ptx = "// ptx\n.version 8.0\n.target sm_80\n"
    cuda = load("cuda", payload("ptx", [("k", [HANDLE], ["threadIdx.x"])], ptx))
    assert cuda.type_key == "cuda" and cuda.get_source() == ptx


def test_every_truncation_is_an_error():
    for n in range(len(GOOD)):
        with pytest.raises(ValueError, match="opencl module: "):
            load("opencl", GOOD[:n])


def test_trailing_bytes():
    with pytest.raises(ValueError, match="3 trailing bytes"):
        load("opencl", GOOD + b"xyz")


@pytest.mark.parametrize("data, phrase", [
    (string("ptx") + u64(0) + string(""), "code format 'ptx' is not one a opencl module can"),
    (string("cl") + u64(1 << 40) + string(""), "nfuncs 1099511627776 at offset 10 is invalid"),
    (payload("cl", [("k", [HANDLE], ["blockIdx.w"])], ""), "unknown launch tag 'blockIdx.w'"),
    (payload("cl", [("k", [HANDLE], ["threadIdx.x", "threadIdx.x"])], ""),
     "launch tag 'threadIdx.x' twice"),
    (payload("cl", [("k", [(2, 32, 4)], [])], ""),
     "argument 0 has type (code 2, bits 32, lanes 4)"),
    (payload("cl", [("k", [(3, 32, 1)], [])], ""), "which a kernel cannot take"),
    (payload("cl", [("k", [HANDLE], [], [1])], ""), "argument 0 is a TensorMap"),
    (payload("cl", [("k", [HANDLE], [], [0, 0])], ""), "differs from the argument count"),
    (payload("cl", [("k", [], []), ("k", [], [])], ""), "kernel 'k' appears twice"),
    (string("cl") + u64(1) + string("a") + string("b") + u64(0) * 3 + string(""),
     "function key 'a' differs from its name 'b'"),
    (payload("cl", [("", [], [])], ""), "function key at offset 18 is empty"),
    (string("cl") + u64(0) + u64(100), "truncated reading code"),
    (string("cl") + u64(1) + string("k") + string("k") + u64(1 << 62) + u64(0) * 3,
     "arg_types count 4611686018427387904 at offset 36 is invalid"),
])
def test_malformed_payloads(data, phrase):
    with pytest.raises(ValueError) as info:
        load("opencl", data)
    assert phrase in str(info.value)


def test_cuda_formats():
    for fmt in ("ptx", "cubin", "fatbin"):
        assert load("cuda", payload(fmt, [], "x")).type_key == "cuda"
    with pytest.raises(ValueError, match="code format 'cl' is not one a cuda module can hold "
                                         r"\(ptx, cubin, fatbin\)"):
        load("cuda", payload("cl", [], "x"))


def test_random_bytes_never_crash():
    rng = np.random.default_rng(7)
    for _ in range(300):
        data = bytearray(GOOD)
        for _ in range(rng.integers(1, 4)):
            data[rng.integers(len(data))] = int(rng.integers(256))
        try:
            load("opencl", bytes(data))
        except ValueError:
            pass

