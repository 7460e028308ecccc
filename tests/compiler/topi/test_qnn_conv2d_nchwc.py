"""The blocked integer convolution (topi.nn.qnn.qnn_conv2d_NCHWc_int8, scheduled by
topi.x86.qnn_conv2d_nchwc): by vpdpbusd where the target has VNNI, by the portable
multiply-add on an llvm target without it and on the c target; each equals numpy's integer
convolution bit for bit: uint8 and int8 data (shifted by +128, the padding holding the zero
point as uint8), channel counts padded to their blocks (3 -> 4 input, 6 -> 16 output), NCHW
and blocked data, strides and padding."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te
from compiler.relax.transform.qnn_layout_nchwc import pack_weight
from compiler.topi.nn.qnn import qnn_conv2d_NCHWc_int8
from compiler.topi.utils import get_const_tuple
from compiler.topi.x86.qnn_conv2d_nchwc import schedule_qnn_conv2d_NCHWc
from compiler.topi.x86.qnn_vnni import vnni_kind

HAS_VNNI = vnni_kind("llvm") is not None
# (target, whether its code must hold vpdpbusd)
TARGETS = [pytest.param("llvm", True, marks=pytest.mark.skipif(
    not HAS_VNNI, reason="this host has no VNNI")), ("llvm -mcpu=haswell", False), ("c", False)]


def reference(x, w, zu, pad, stride):
    """sum(xu * w) with the spatial padding holding zu (x already as uint8 values)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                constant_values=zu)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.int64))
    return out


def _run(target, shape, dtype, ib, ob, blocked=False, zx=3):
    n, c, h, o, k, pad, stride = shape
    rng = np.random.default_rng(sum(shape))
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    x = rng.integers(lo, hi, (n, c, h, h)).astype(dtype)
    w = rng.integers(-128, 128, (o, c, k, k)).astype("int8")
    data = x.reshape(n, c // ib, ib, h, h).transpose(0, 1, 3, 4, 2).copy() if blocked else x
    packed = pack_weight(w, ib, ob)
    X = te.placeholder(data.shape, dtype, name="X")
    W = te.placeholder(packed.shape, "int8", name="W")
    C = qnn_conv2d_NCHWc_int8(X, W, zx, stride, pad, 1, c)
    f = build(schedule_qnn_conv2d_NCHWc([C], target=target), [X, W, C], target=target)
    out = runtime.nd.empty(get_const_tuple(C.shape), "int32")
    f(runtime.nd.array(data), runtime.nd.array(packed), out)
    got = out.numpy()
    got = got.transpose(0, 1, 4, 2, 3).reshape(n, -1, got.shape[2], got.shape[3])[:, :o]
    shift = 128 if dtype == "int8" else 0
    np.testing.assert_array_equal(got, reference(x.astype(np.int64) + shift, w, zx + shift,
                                                 pad, stride))
    return f


@pytest.mark.parametrize("target,vnni", TARGETS)
@pytest.mark.parametrize("shape,dtype,ib,ob", [
    ((1, 32, 9, 32, 3, 1, 1), "uint8", 16, 16),
    ((2, 3, 10, 6, 3, 1, 2), "int8", 4, 16),     # channels padded: 3 -> 4 in, 6 -> 16 out
    ((1, 16, 7, 8, 1, 0, 1), "int8", 8, 8),      # 1x1, 256-bit blocks
    ((1, 8, 6, 12, 3, 2, 1), "uint8", 8, 4),     # 128-bit blocks
])
def test_matches_numpy(target, vnni, shape, dtype, ib, ob):
    f = _run(target, shape, dtype, ib, ob)
    if target.startswith("llvm"):
        assert ("vpdpbusd" in f.get_source("asm")) == vnni


@pytest.mark.parametrize("target,vnni", TARGETS[:2])
def test_blocked_data(target, vnni):
    _run(target, (1, 32, 8, 16, 3, 1, 1), "int8", 16, 16, blocked=True, zx=-5)


def grouped_reference(x, w, zu, pad, groups):
    """The per-group sum(xu * w), stride 1."""
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    return np.concatenate([reference(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], zu, pad,
                                     1) for g in range(groups)], axis=1)


@pytest.mark.parametrize("target,vnni", TARGETS)
@pytest.mark.parametrize("dtype,block,groups", [("uint8", 8, 4), ("int8", 4, 2)])
def test_grouped(target, vnni, dtype, block, groups):
    """Groups of whole blocks: output block o reads its group's input blocks."""
    rng = np.random.default_rng(groups)
    n, c, h, o, k = 1, 32, 7, 16 * groups // 2, 3
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    x = rng.integers(lo, hi, (n, c, h, h)).astype(dtype)
    w = rng.integers(-128, 128, (o, c // groups, k, k)).astype("int8")
    packed = pack_weight(w, block, block)
    X = te.placeholder(x.shape, dtype, name="X")
    W = te.placeholder(packed.shape, "int8", name="W")
    C = qnn_conv2d_NCHWc_int8(X, W, 5, 1, 1, 1, c, groups)
    f = build(schedule_qnn_conv2d_NCHWc([C], target=target), [X, W, C], target=target)
    out = runtime.nd.empty(get_const_tuple(C.shape), "int32")
    f(runtime.nd.array(x), runtime.nd.array(packed), out)
    got = out.numpy()
    got = got.transpose(0, 1, 4, 2, 3).reshape(n, -1, got.shape[2], got.shape[3])
    shift = 128 if dtype == "int8" else 0
    np.testing.assert_array_equal(got, grouped_reference(x.astype(np.int64) + shift, w,
                                                         5 + shift, 1, groups))
    if target.startswith("llvm"):
        assert ("vpdpbusd" in f.get_source("asm")) == vnni


def test_rows_prefetch_the_next_blocks_weights():
    """As conv2d_NCHWc's rows: the loop over (group of channel blocks, row) prefetches the
    weights of the group one on, a group's rows (7) ahead; 4 groups of 1 block."""
    x = te.placeholder((1, 2, 7, 7, 16), name="x", dtype="uint8")
    w = te.placeholder((4, 2, 1, 1, 4, 16, 4), name="w", dtype="int8")
    y = qnn_conv2d_NCHWc_int8(x, w, 0, 1, 0, 1, 32)
    text = str(lower(schedule_qnn_conv2d_NCHWc([y], oc_blocks=1, ow_tile=7), [x, w, y]))
    assert "tir.prefetch(tir.address_of(w[min(b.o.outer.fused.y.fused + 7, 27) // 7 * 512" \
        in text
