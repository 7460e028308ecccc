"""The blocked integer depthwise convolution (topi.nn.qnn.qnn_depthwise_conv2d_NCHWc_int8,
scheduled by topi.x86.qnn_depthwise_conv2d_nchwc) equals numpy's per-channel integer
convolution bit for bit on llvm and c: int8 and uint8 data, NCHW and blocked data, the padding
holding the zero point, strides 1 and 2, channel counts padded to the block (20 -> 32)."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te
from compiler.ir.errors import IRError
from compiler.relax.transform.qnn_layout_nchwc import pack_depthwise_weight
from compiler.topi.nn.qnn import qnn_depthwise_conv2d_NCHWc_int8
from compiler.topi.utils import get_const_tuple
from compiler.topi.x86.qnn_depthwise_conv2d_nchwc import schedule_qnn_depthwise_conv2d_NCHWc


def reference(x, w, zx, pad, stride):
    """sum(x * w) per channel, the spatial padding holding zx."""
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                constant_values=zx)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, c, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += patch * w[:, 0, i, j].astype(np.int64).reshape(1, -1, 1, 1)
    return out


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("shape,dtype,block,blocked,zx", [
    ((1, 32, 12, 3, 1, 1), "uint8", 16, True, 119),
    ((2, 20, 9, 3, 1, 2), "int8", 16, False, -6),      # channels padded: 20 -> 32
    ((1, 16, 8, 5, 2, 1), "int8", 8, True, 4),
])
def test_matches_numpy(target, shape, dtype, block, blocked, zx):
    n, c, h, k, pad, stride = shape
    rng = np.random.default_rng(sum(shape))
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    x = rng.integers(lo, hi, (n, c, h, h)).astype(dtype)
    w = rng.integers(-128, 128, (c, 1, k, k)).astype("int8")
    data = x.reshape(n, c // block, block, h, h).transpose(0, 1, 3, 4, 2).copy() if blocked \
        else x
    packed = pack_depthwise_weight(w, block)
    X = te.placeholder(data.shape, dtype, name="X")
    W = te.placeholder(packed.shape, "int8", name="W")
    C = qnn_depthwise_conv2d_NCHWc_int8(X, W, zx, stride, pad, 1, c)
    f = build(schedule_qnn_depthwise_conv2d_NCHWc([C]), [X, W, C], target=target)
    out = runtime.nd.empty(get_const_tuple(C.shape), "int32")
    f(runtime.nd.array(data), runtime.nd.array(packed), out)
    got = out.numpy()
    got = got.transpose(0, 1, 4, 2, 3).reshape(n, -1, got.shape[2], got.shape[3])[:, :c]
    np.testing.assert_array_equal(got, reference(x, w, zx, pad, stride))


def test_block_mismatch_is_an_error():
    X = te.placeholder((1, 2, 8, 8, 8), "int8", name="X")
    W = te.placeholder((1, 3, 3, 16), "int8", name="W")
    with pytest.raises(IRError, match=r"is not \[C/b, KH, KW, b\]"):
        qnn_depthwise_conv2d_NCHWc_int8(X, W, 0, 1, 1, 1, 16)
