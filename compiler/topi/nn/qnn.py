"""Quantized operators in TE, with ONNX's quantization arithmetic (see compiler/relax/op/qnn.py).

A scale, multiplier or zero point is a Python number (per tensor) or a tensor: 0-d (per tensor,
known at run time) or 1-D (per channel along `axis`).

Integer convolution and matmul accumulate in int32 in the form a later int8 dot-product
schedule can take over: the reduction sums raw products int32(data) * int32(weight) (u8 x s8
or s8 x s8), the data padded with its zero point, and the zero points are corrections outside
the reduction:

    sum((x - zx) * (w - zw)) = sum(x * w') - zx * sum(w'),   w' = w - zw

(w' is w itself when zw is 0, as for the symmetric int8 weights of ONNX Runtime's quantizer).
The reduction stage carries the tag of the float operator whose schedule it takes
("conv2d_nchw", "group_conv2d_nchw", "matmul"); the correction is an elementwise stage after it.
"""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...tir import expr as E
from .. import tag
from .conv2d import group_conv2d_nchw
from .pad import pad
from .utils import get_pad_tuple, pair


def dtype_range(dtype: str):
    """(lowest, highest) value of integer `dtype`."""
    d = as_dtype(dtype)
    bits = d.bits
    if str(d).startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _param(p, idx, axis: int, dtype: str):
    """Parameter `p` (a number or a 0-d / 1-D tensor) at the output index `idx`, as `dtype`."""
    if isinstance(p, te.Tensor):
        if p.ndim == 0:
            v = p()
        elif p.ndim == 1 and isinstance(p.shape[0], int) and p.shape[0] == 1:
            v = p[0]
        else:
            v = p[idx[axis]]
        return v if str(v.dtype) == dtype else E.cast(as_dtype(dtype), v)
    return E.make_const(as_dtype(dtype), p)


def _is_zero(p) -> bool:
    return not isinstance(p, te.Tensor) and p == 0


def _saturate(v, out_dtype: str):
    """Float `v`, already rounded, clamped to `out_dtype`'s range and converted."""
    lo, hi = dtype_range(out_dtype)
    v = E.Min(E.Max(v, E.make_const(v.dtype, lo)), E.make_const(v.dtype, hi))
    return E.cast(as_dtype(out_dtype), v)


def quantize(x, scale, zero_point, axis: int = 1, out_dtype: str = "int8"):
    """saturate(round_half_to_even(x / scale) + zero_point), the division in x's dtype."""
    ft = str(x.dtype)
    axis = axis % max(x.ndim, 1)

    def f(*i):
        v = te.nearbyint(x(*i) / _param(scale, i, axis, ft))
        return _saturate(v + _param(zero_point, i, axis, ft), out_dtype)

    return te.compute(x.shape, f, name="T_quantize", tag=tag.BROADCAST)


def dequantize(x, scale, zero_point, axis: int = 1, out_dtype: str = "float32"):
    """(int32(x) - zero_point) * scale in `out_dtype`."""
    axis = axis % max(x.ndim, 1)

    def f(*i):
        v = E.cast(as_dtype("int32"), x(*i)) - _param(zero_point, i, axis, "int32")
        return E.cast(as_dtype(out_dtype), v) * _param(scale, i, axis, out_dtype)

    return te.compute(x.shape, f, name="T_dequantize", tag=tag.BROADCAST)


def requantize(x, multiplier, zero_point, axis: int = 1, out_dtype: str = "int8",
               compute_dtype: str = "float32"):
    """int32 `x` as saturate(round_half_to_even(x * multiplier) + zero_point), in
    `compute_dtype` (the multiplier's float type)."""
    axis = axis % max(x.ndim, 1)

    def f(*i):
        v = E.cast(as_dtype(compute_dtype), x(*i)) * _param(multiplier, i, axis, compute_dtype)
        return _saturate(te.nearbyint(v) + _param(zero_point, i, axis, compute_dtype),
                         out_dtype)

    return te.compute(x.shape, f, name="T_requantize", tag=tag.BROADCAST)


def _weight_minus_zero(w, zero_point, axis: int):
    """int32(w) - zero_point (per tensor or per `axis`); int32(w) when the zero point is 0."""
    i32 = as_dtype("int32")
    if _is_zero(zero_point):
        return te.compute(w.shape, lambda *i: E.cast(i32, w(*i)), name="T_weight_int32",
                          tag=tag.ELEMWISE)
    return te.compute(w.shape, lambda *i: E.cast(i32, w(*i)) - _param(zero_point, i, axis,
                                                                        "int32"),
                      name="T_weight_centered", tag=tag.BROADCAST)


def qnn_conv2d_nchw(data, weight, data_zero_point, weight_zero_point, strides, padding,
                    dilation, groups: int = 1):
    """int32 sum((data - zx) * (weight - zw)) of NCHW `data` by OIHW `weight`, the padding
    holding zx (a real 0)."""
    _, _, kh, kw = weight.shape
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    if (pt, pl, pb, pr) != (0, 0, 0, 0):
        zx = data_zero_point() if isinstance(data_zero_point, te.Tensor) else data_zero_point
        data = pad(data, (0, 0, pt, pl), (0, 0, pb, pr), pad_value=zx, name="pad_temp")
    w = _weight_minus_zero(weight, weight_zero_point, 0)
    name = "conv2d_nchw" if groups == 1 else "group_conv2d_nchw"
    core = group_conv2d_nchw(data, w, strides, 0, dilation, groups, "int32", name=name, tag=name)
    if _is_zero(data_zero_point):
        return core
    rc = te.reduce_axis((0, w.shape[1]), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    wsum = te.compute((w.shape[0],), lambda o: te.sum(w[o, rc, ry, rx], axis=[rc, ry, rx]),
                      name="T_weight_sum")
    return te.compute(core.shape, lambda n, o, y, x: core[n, o, y, x] - _param(
        data_zero_point, (n, o, y, x), 1, "int32") * wsum[o], name="T_qnn_conv2d",
        tag=tag.BROADCAST)


def qnn_matmul(a, b, a_zero_point, b_zero_point):
    """int32 sum((a - za) * (b - zb)) of a [..., M, K] by b [K, N]."""
    w = _weight_minus_zero(b, b_zero_point, 1)
    K, N = b.shape
    i32 = as_dtype("int32")
    k = te.reduce_axis((0, K), name="k")
    if a.ndim == 2:
        core = te.compute((a.shape[0], N), lambda i, j: te.sum(
            E.cast(i32, a[i, k]) * w[k, j], axis=k), name="T_matmul", tag="matmul")
    else:
        core = te.compute(tuple(a.shape[:-1]) + (N,), lambda *i: te.sum(
            E.cast(i32, a[i[:-1] + (k,)]) * w[k, i[-1]], axis=k), name="T_matmul_nd",
            tag="matmul_nd")
    if _is_zero(a_zero_point):
        return core
    kk = te.reduce_axis((0, K), name="kk")
    wsum = te.compute((N,), lambda j: te.sum(w[kk, j], axis=kk), name="T_weight_sum")
    return te.compute(core.shape, lambda *i: core(*i) - _param(a_zero_point, i, 0, "int32")
                      * wsum[i[-1]], name="T_qnn_matmul", tag=tag.BROADCAST)


__all__ = ["dequantize", "dtype_range", "qnn_conv2d_nchw", "qnn_matmul", "quantize",
           "requantize"]
