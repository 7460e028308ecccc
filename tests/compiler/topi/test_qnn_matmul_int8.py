"""The packed integer matmul (topi.nn.qnn.qnn_matmul_packed_int8, scheduled by
topi.x86.qnn_matmul_int8): by vpdpbusd where the target has VNNI, by the portable multiply-add
on an llvm target without it and on the c target; each equals numpy's integer product about
the zero point bit for bit: uint8 and int8 data (shifted by +128), zero points known now or at
run time, K padded to 4, 2-D and 3-D data, column counts of 16, 8 and 4 lanes, rows that do
not divide the tile; with the requantize fused after it."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te
from compiler.ir.errors import IRError
from compiler.relax.transform.qnn_layout_nchwc import pack_matmul_weight
from compiler.topi.nn.qnn import qnn_matmul_packed_int8, requantize
from compiler.topi.utils import get_const_tuple
from compiler.topi.x86.qnn_matmul_int8 import schedule_qnn_matmul_int8
from compiler.topi.x86.qnn_vnni import vnni_kind

HAS_VNNI = vnni_kind("llvm") is not None
# (target, whether its code must hold vpdpbusd)
TARGETS = [pytest.param("llvm", True, marks=pytest.mark.skipif(
    not HAS_VNNI, reason="this host has no VNNI")), ("llvm -mcpu=haswell", False), ("c", False)]


def _case(a_shape, n, dtype, seed):
    rng = np.random.default_rng(seed)
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    a = rng.integers(lo, hi, a_shape).astype(dtype)
    w = rng.integers(-128, 128, (a_shape[-1], n)).astype("int8")
    return a, w


def _build(target, a, w, za, runtime_zp, requant=None):
    packed, wsum = pack_matmul_weight(w)
    A = te.placeholder(a.shape, str(a.dtype), name="A")
    W = te.placeholder(packed.shape, "int8", name="W")
    S = te.placeholder(wsum.shape, "int32", name="S")
    Z = te.placeholder((), "int32", name="Z")
    C = qnn_matmul_packed_int8(A, W, Z if runtime_zp else za, S)
    out = C if requant is None else requantize(C, requant, 3, axis=-1, out_dtype="int8",
                                               compute_dtype="float64")
    args = [A, W, S] + ([Z] if runtime_zp else []) + [out]
    f = build(schedule_qnn_matmul_int8([out], target=target), args, target=target)
    feeds = [runtime.nd.array(a), runtime.nd.array(packed), runtime.nd.array(wsum)]
    if runtime_zp:
        feeds.append(runtime.nd.array(np.asarray(za, "int32")))
    res = runtime.nd.empty(get_const_tuple(out.shape), str(out.dtype))
    f(*feeds, res)
    return f, res.numpy()


@pytest.mark.parametrize("target,vnni", TARGETS)
@pytest.mark.parametrize("a_shape,n,dtype,za,runtime_zp", [
    ((8, 64), 64, "uint8", 117, False),
    ((2, 6, 30), 16, "int8", -5, False),       # 3-D data, K padded 30 -> 32, 6 rows
    ((3, 12), 24, "uint8", 0, True),           # zero point at run time, 8-lane blocks
    ((5, 20), 12, "int8", 7, True),            # 4-lane blocks
])
def test_matches_numpy(target, vnni, a_shape, n, dtype, za, runtime_zp):
    a, w = _case(a_shape, n, dtype, sum(a_shape) + n)
    f, got = _build(target, a, w, za, runtime_zp)
    want = (a.astype(np.int64) - za) @ w.astype(np.int64)
    np.testing.assert_array_equal(got, want)
    if target.startswith("llvm"):
        assert ("vpdpbusd" in f.get_source("asm")) == vnni


@pytest.mark.parametrize("target,vnni", TARGETS[:2])
def test_requantize_fused(target, vnni):
    a, w = _case((16, 48), 32, "int8", 3)
    _, got = _build(target, a, w, -9, False, requant=1.7e-3)
    acc = (a.astype(np.int64) - (-9)) @ w.astype(np.int64)
    want = np.clip(np.round(acc * 1.7e-3) + 3, -128, 127).astype("int8")
    np.testing.assert_array_equal(got, want)


def test_bad_weight_shape_is_an_error():
    A = te.placeholder((4, 8), "uint8", name="A")
    W = te.placeholder((1, 16, 4), "int8", name="W")     # K = 8 needs 2 groups of 4
    S = te.placeholder((16,), "int32", name="S")
    with pytest.raises(IRError, match=r"not \[K4/4, N, 4\] and \[N\] for K = 8"):
        qnn_matmul_packed_int8(A, W, 0, S)
