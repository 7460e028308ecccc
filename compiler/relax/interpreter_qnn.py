"""numpy kernels of the quantized operators (relax.qnn.*) for the reference interpreter
(registered into interpreter_ops.KERNELS): ONNX's arithmetic, integers in int64, the quantize
division in the input's float type and the requantize product in the multiplier's."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .interpreter_ops import kernel


def _range(dtype) -> tuple:
    info = np.iinfo(np.dtype(dtype))
    return info.min, info.max


def _along(p, axis: int, ndim: int) -> np.ndarray:
    """Parameter `p` (0-d or 1-D) shaped to broadcast along `axis` of an ndim-d tensor."""
    p = np.asarray(p)
    if p.ndim == 0 or p.size == 1:
        return p.reshape(())
    if p.ndim == ndim and ndim > 1:
        return p
    shape = [1] * ndim
    shape[axis % ndim] = -1
    return p.reshape(shape)


def _saturate(v: np.ndarray, dtype) -> np.ndarray:
    lo, hi = _range(dtype)
    return np.clip(v, lo, hi).astype(dtype)


@kernel("qnn.quantize")
def _quantize(attrs, x, scale, zero_point):
    x = np.asarray(x)
    ft = x.dtype
    s = _along(scale, attrs.axis, x.ndim).astype(ft)
    z = _along(zero_point, attrs.axis, x.ndim).astype(ft)
    with np.errstate(all="ignore"):
        v = np.rint(x / s) + z
    return _saturate(v, attrs.out_dtype)


@kernel("qnn.dequantize")
def _dequantize(attrs, x, scale, zero_point):
    x = np.asarray(x)
    ft = np.dtype(attrs.out_dtype)
    v = x.astype(np.int64) - _along(zero_point, attrs.axis, x.ndim).astype(np.int64)
    return (v.astype(ft) * _along(scale, attrs.axis, x.ndim).astype(ft)).astype(ft)


@kernel("qnn.requantize")
def _requantize(attrs, x, multiplier, zero_point):
    x = np.asarray(x)
    m = np.asarray(multiplier)
    ft = m.dtype
    v = x.astype(ft) * _along(m, attrs.axis, x.ndim)
    v = np.rint(v) + _along(zero_point, attrs.axis, x.ndim).astype(ft)
    return _saturate(v, attrs.out_dtype)


@kernel("qnn.conv2d")
def _qnn_conv2d(attrs, x, w, x_zero_point, w_zero_point):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    g = attrs.groups
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    xc = x.astype(np.int64) - np.int64(np.asarray(x_zero_point))
    wc = w.astype(np.int64) - _along(w_zero_point, 0, 4).astype(np.int64)
    xp = np.pad(xc, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    xg = xp.reshape(n, g, cg, xp.shape[2], xp.shape[3])
    wg = wc.reshape(g, o // g, cg, kh, kw)
    out = np.zeros((n, g, o // g, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xg[:, :, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            out += np.einsum("ngchw,goc->ngohw", patch, wg[:, :, :, i, j])
    return out.reshape(n, o, oh, ow).astype(np.int32)


@kernel("qnn.matmul")
def _qnn_matmul(attrs, a, b, a_zero_point, b_zero_point):
    ac = a.astype(np.int64) - np.int64(np.asarray(a_zero_point))
    bc = b.astype(np.int64) - _along(b_zero_point, 1, 2).astype(np.int64)
    return np.matmul(ac, bc).astype(np.int32)


@kernel("qnn.conv2d_NCHWc")
def _qnn_conv2d_nchwc(attrs, x, w):
    x = np.asarray(x)
    shift = 128 if x.dtype == np.int8 else 0
    if x.ndim == 5:
        x = x.transpose(0, 1, 4, 2, 3).reshape(x.shape[0], -1, x.shape[2], x.shape[3])
    ocb, icb, kh, kw, ig, ob, _ = w.shape
    ib = ig * 4
    groups = attrs.groups
    zu = attrs.data_zero_point + shift
    xu = np.full((x.shape[0], icb * ib * groups) + x.shape[2:], zu, np.int64)
    xu[:, :attrs.channels] = x[:, :attrs.channels].astype(np.int64) + shift
    wo = w.transpose(0, 5, 1, 4, 6, 2, 3).reshape(ocb * ob, icb * ib, kh, kw)
    pt, pl, pb, pr = attrs.padding
    xp = np.pad(xu, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=zu)
    unpadded = SimpleNamespace(strides=attrs.strides, dilation=attrs.dilation, groups=groups,
                               padding=(0, 0, 0, 0))
    out = _qnn_conv2d(unpadded, xp, wo, 0, np.int32(0))
    n, o, oh, ow = out.shape
    return out.reshape(n, ocb, ob, oh, ow).transpose(0, 1, 3, 4, 2).copy()


@kernel("qnn.matmul_packed")
def _qnn_matmul_packed(attrs, a, w, a_zero_point, weight_sum):
    g4, n, _ = w.shape
    wc = np.asarray(w).transpose(0, 2, 1).reshape(g4 * 4, n)[:a.shape[-1]]
    ac = a.astype(np.int64) - np.int64(np.asarray(a_zero_point))
    return np.matmul(ac, wc.astype(np.int64)).astype(np.int32)


@kernel("qnn.depthwise_conv2d_NCHWc")
def _qnn_depthwise_conv2d_nchwc(attrs, x, w):
    x = np.asarray(x)
    cb, kh, kw, b = w.shape
    if x.ndim == 5:
        x = x.transpose(0, 1, 4, 2, 3).reshape(x.shape[0], -1, x.shape[2], x.shape[3])
    xf = np.full((x.shape[0], cb * b) + x.shape[2:], attrs.data_zero_point, np.int64)
    c = min(x.shape[1], cb * b)
    xf[:, :c] = x[:, :c]
    wo = np.asarray(w).transpose(0, 3, 1, 2).reshape(cb * b, 1, kh, kw)
    pt, pl, pb, pr = attrs.padding
    xp = np.pad(xf, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=attrs.data_zero_point)
    unpadded = SimpleNamespace(strides=attrs.strides, dilation=attrs.dilation, groups=cb * b,
                               padding=(0, 0, 0, 0))
    out = _qnn_conv2d(unpadded, xp, wo, 0, np.int32(0))
    n, o, oh, ow = out.shape
    return out.reshape(n, cb, b, oh, ow).transpose(0, 1, 3, 4, 2).copy()
