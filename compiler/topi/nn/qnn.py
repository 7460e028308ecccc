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
from ...ir.errors import IRError
from ...tir import expr as E
from ...tir.functor import substitute
from .. import tag
from ..utils import get_const_tuple
from .conv2d import group_conv2d_nchw
from .pad import pad
from .utils import get_pad_tuple, pair

# Integer types whose values a float32 holds exactly, with their differences.
_NARROW = frozenset({"int8", "uint8", "int16", "uint16"})


def dtype_range(dtype: str):
    """(lowest, highest) value of integer `dtype`."""
    d = as_dtype(dtype)
    bits = d.bits
    if str(d).startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def qnn_param(p, idx, axis: int, dtype: str):
    """Parameter `p` (a number, a 0-d / 1-D tensor, or a tensor of the output's rank that
    broadcasts against it, as a per-channel parameter in a blocked layout) at the output index
    `idx`, as `dtype`."""
    if isinstance(p, te.Tensor):
        if p.ndim == 0:
            v = p()
        elif p.ndim == 1 and isinstance(p.shape[0], int) and p.shape[0] == 1:
            v = p[0]
        elif p.ndim == len(idx) and p.ndim > 1:
            v = p(*[0 if d == 1 else i for d, i in zip(get_const_tuple(p.shape), idx)])
        else:
            v = p[idx[axis]]
        return v if str(v.dtype) == dtype else E.cast(as_dtype(dtype), v)
    return E.make_const(as_dtype(dtype), p)


def _is_zero(p) -> bool:
    return not isinstance(p, te.Tensor) and p == 0


def saturate(v, out_dtype: str):
    """Float `v`, already rounded, clamped to `out_dtype`'s range and converted."""
    lo, hi = dtype_range(out_dtype)
    v = E.Min(E.Max(v, E.make_const(v.dtype, lo)), E.make_const(v.dtype, hi))
    return E.cast(as_dtype(out_dtype), v)


def quantize(x, scale, zero_point, axis: int = 1, out_dtype: str = "int8"):
    """saturate(round_half_to_even(x / scale) + zero_point), the division in x's dtype."""
    ft = str(x.dtype)
    axis = axis % max(x.ndim, 1)

    def f(*i):
        v = te.nearbyint(x(*i) / qnn_param(scale, i, axis, ft))
        return saturate(v + qnn_param(zero_point, i, axis, ft), out_dtype)

    return te.compute(x.shape, f, name="T_quantize", tag=tag.BROADCAST)


def _requantized_float(x, i):
    """Element i of a requantize's 8- or 16-bit output as the rounded, clamped float it was
    converted from (the same value, exactly), or None when `x` is not such an output."""
    op = x.op
    if not isinstance(op, te.ComputeOp) or op.name != "T_requantize" or len(op.body) != 1:
        return None
    body = op.body[0]
    if not isinstance(body, E.Cast) or str(x.dtype) not in _NARROW or \
            not str(body.value.dtype).startswith("float"):
        return None
    return substitute(body.value, {iv.var: j for iv, j in zip(op.axis, i)})


def _minus_zero_point(r, zero_point, i, axis: int):
    """r - zero_point for r = min(max(a + z, lo), hi) of a requantize, as
    min(max(a, lo - z), hi - z) where the zero points are the same constant (one operation
    each way less; exact, as the numbers are small integers)."""
    if isinstance(r, E.Min) and isinstance(r.a, E.Max) and isinstance(r.a.a, E.Add) and \
            not isinstance(zero_point, te.Tensor) and \
            all(isinstance(c, E.FloatImm) for c in (r.b, r.a.b, r.a.a.b)) and \
            float(r.a.a.b) == float(zero_point):
        z = float(zero_point)
        return E.Min(E.Max(r.a.a.a, E.make_const(r.dtype, float(r.a.b) - z)),
                     E.make_const(r.dtype, float(r.b) - z))
    return r - qnn_param(zero_point, i, axis, str(r.dtype))


def dequantize(x, scale, zero_point, axis: int = 1, out_dtype: str = "float32"):
    """(int32(x) - zero_point) * scale in `out_dtype`. Of a requantize's output, the float the
    requantize rounded and clamped is taken as it is (the same number, without the round trip
    through the integer type)."""
    axis = axis % max(x.ndim, 1)

    def f(*i):
        r = _requantized_float(x, i)
        if r is not None:
            v = E.cast(as_dtype(out_dtype), _minus_zero_point(r, zero_point, i, axis))
            return v * qnn_param(scale, i, axis, out_dtype)
        v = E.cast(as_dtype("int32"), x(*i)) - qnn_param(zero_point, i, axis, "int32")
        return E.cast(as_dtype(out_dtype), v) * qnn_param(scale, i, axis, out_dtype)

    return te.compute(x.shape, f, name="T_dequantize", tag=tag.BROADCAST)


def requantize(x, multiplier, zero_point, axis: int = 1, out_dtype: str = "int8",
               compute_dtype: str = "float32"):
    """int32 `x` as saturate(round_half_to_even(x * multiplier) + zero_point), in
    `compute_dtype` (the multiplier's float type)."""
    axis = axis % max(x.ndim, 1)

    def f(*i):
        v = E.cast(as_dtype(compute_dtype), x(*i)) * qnn_param(multiplier, i, axis, compute_dtype)
        return saturate(te.nearbyint(v) + qnn_param(zero_point, i, axis, compute_dtype),
                         out_dtype)

    return te.compute(x.shape, f, name="T_requantize", tag=tag.BROADCAST)


def _weight_minus_zero(w, zero_point, axis: int):
    """int32(w) - zero_point (per tensor or per `axis`); int32(w) when the zero point is 0."""
    i32 = as_dtype("int32")
    if _is_zero(zero_point):
        return te.compute(w.shape, lambda *i: E.cast(i32, w(*i)), name="T_weight_int32",
                          tag=tag.ELEMWISE)
    return te.compute(w.shape, lambda *i: E.cast(i32, w(*i)) - qnn_param(zero_point, i, axis,
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
    return te.compute(core.shape, lambda n, o, y, x: core[n, o, y, x] - qnn_param(
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
    return te.compute(core.shape, lambda *i: core(*i) - qnn_param(a_zero_point, i, 0, "int32")
                      * wsum[i[-1]], name="T_qnn_matmul", tag=tag.BROADCAST)


def _data_u8(data, ib: int, channels: int, zero_point: int, pads, name: str):
    """`data` (NCHW, or NCHW[ib]c) as uint8 NCHW[ib]c (int8 shifted by +128), the spatial
    padding `pads` (top, left, bottom, right) and the channels from `channels` to the block's
    multiple holding the zero point as uint8 (`zero_point`, + 128 for int8); `data` itself
    where that changes nothing."""
    signed = str(data.dtype) == "int8"
    blocked = data.ndim == 5
    pt, pl, pb, pr = pads
    if blocked and not signed and not any(pads) and get_const_tuple(data.shape)[4] == ib:
        return data
    n, _, h, w = get_const_tuple(data.shape[:4])
    cb = (channels + ib - 1) // ib
    u8, i32 = as_dtype("uint8"), as_dtype("int32")
    zu = E.make_const(u8, zero_point + (128 if signed else 0))

    def f(b, c, y, x, ci):
        ch = c * ib + ci
        v = data[b, c, y - pt, x - pl, ci] if blocked else data[b, ch, y - pt, x - pl]
        v = E.cast(u8, E.cast(i32, v) + 128) if signed else v
        conds = [y >= pt, y < h + pt, x >= pl, x < w + pl] if any(pads) else []
        if channels % ib:
            conds.append(ch < channels)
        return te.if_then_else(te.all(*conds), v, zu) if conds else v

    return te.compute((n, cb, h + pt + pb, w + pl + pr, ib), f, name=name, tag="injective,pad")


def qnn_conv2d_NCHWc_int8(data, weight, data_zero_point: int, strides, padding, dilation,
                          channels: int, groups: int = 1):
    """int32 sum(u8(data) * weight) over the kernel window: the blocked integer convolution.

    data: int8 or uint8, NCHW [N, C, H, W] or NCHW[ib]c (`channels` C in all); weight: int8
    [OC/ob, IC/ib, KH, KW, ib/4, ob, 4] (VNNI's 4-byte groups of input channels, the input
    channels padded to a multiple of ib with zeros); out: int32 NCHW[ob]c. u8(data) is the
    data as uint8 (int8 + 128), and every position outside it (the spatial padding, the
    channels past C) holds `data_zero_point` as uint8. So with w' = weight:
    sum((x - zx) * w') = out - zu * sum(w'), zu the zero point as uint8, a constant per output
    channel that a graph pass folds into the bias.
    groups > 1: a grouped convolution, each group's input and output channels whole blocks
    (IC / groups of them in the weight's second dim); output block o reads the input blocks of
    its group, o // (OC / groups / ob)."""
    ocb, icb, kh, kw, ig, ob, four = get_const_tuple(weight.shape)
    ib = ig * 4
    if groups > 1 and (ocb % groups or icb * ib * groups != channels):
        raise IRError(f"qnn_conv2d_NCHWc_int8: weight {weight.shape} does not split into "
                      f"{groups} groups of whole blocks of {channels} channels")
    if four != 4 or icb * ib * groups < channels:
        raise IRError(f"qnn_conv2d_NCHWc_int8: weight {weight.shape} is not "
                      "[OC/ob, IC/ib, KH, KW, ib/4, ob, 4] for the data's channels")
    sh, sw = pair(strides, "strides")
    dh, dw = pair(dilation, "dilation")
    pads = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    xu = _data_u8(data, ib, channels, int(data_zero_point), pads, "T_data_u8")
    n, _, hp, wp, _ = get_const_tuple(xu.shape)
    oh = (hp - (kh - 1) * dh - 1) // sh + 1
    ow = (wp - (kw - 1) * dw - 1) // sw + 1
    i32 = as_dtype("int32")
    rc = te.reduce_axis((0, icb), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    rg = te.reduce_axis((0, ig), name="rg")
    rk = te.reduce_axis((0, 4), name="rk")
    per_group = ocb // groups

    def block(o):
        return rc if groups == 1 else o // per_group * icb + rc

    return te.compute(
        (n, ocb, oh, ow, ob),
        lambda b, o, y, x, oi: te.sum(
            E.cast(i32, xu[b, block(o), y * sh + ry * dh, x * sw + rx * dw, rg * 4 + rk])
            * E.cast(i32, weight[o, rc, ry, rx, rg, oi, rk]), axis=[rc, ry, rx, rg, rk]),
        name="conv2d_NCHWc_int8", tag="conv2d_NCHWc_int8")


def _data_blocked(data, block: int, channels: int, fill: int, pads, name: str):
    """`data` (NCHW, or NCHW[block]c) as NCHW[block]c in its own type, the spatial padding
    `pads` (top, left, bottom, right) and NCHW channels past `channels` holding `fill`; `data`
    itself where that changes nothing."""
    blocked = data.ndim == 5
    pt, pl, pb, pr = pads
    if blocked and not any(pads):
        return data
    n, _, h, w = get_const_tuple(data.shape[:4])
    cb = (channels + block - 1) // block
    value = E.make_const(as_dtype(str(data.dtype)), fill)

    def f(b, c, y, x, ci):
        ch = c * block + ci
        v = data[b, c, y - pt, x - pl, ci] if blocked else \
            data[b, E.Min(ch, E.make_const(ch.dtype, channels - 1)), y - pt, x - pl]
        conds = [y >= pt, y < h + pt, x >= pl, x < w + pl] if any(pads) else []
        if not blocked and channels % block:
            conds.append(ch < channels)
        return te.if_then_else(te.all(*conds), v, value) if conds else v

    return te.compute((n, cb, h + pt + pb, w + pl + pr, block), f, name=name,
                      tag="injective,pad")


def qnn_depthwise_conv2d_NCHWc_int8(data, weight, data_zero_point: int, strides, padding,
                                    dilation, channels: int):
    """int32 sum(data * weight) over the kernel window of each channel: the blocked integer
    depthwise convolution (one filter per channel).

    data: int8 or uint8, NCHW [N, C, H, W] or NCHW[b]c (`channels` C in all); weight: int8
    [C/b, KH, KW, b] (the channels padded to a multiple of b with zero filters); out: int32
    NCHW[b]c. Every position outside the data (the spatial padding, NCHW channels past C)
    holds `data_zero_point`, so with w' = weight: sum((x - zx) * w') = out - zx * sum(w'), a
    constant per channel that a graph pass folds into the bias."""
    cb, kh, kw, block = get_const_tuple(weight.shape)
    if cb * block < channels or (data.ndim == 5 and get_const_tuple(data.shape)[4] != block):
        raise IRError(f"qnn_depthwise_conv2d_NCHWc_int8: weight {weight.shape} is not "
                      f"[C/b, KH, KW, b] for data {data.shape} of {channels} channels")
    sh, sw = pair(strides, "strides")
    dh, dw = pair(dilation, "dilation")
    pads = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    xp = _data_blocked(data, block, channels, int(data_zero_point), pads, "T_data_pad")
    n, _, hp, wp, _ = get_const_tuple(xp.shape)
    oh = (hp - (kh - 1) * dh - 1) // sh + 1
    ow = (wp - (kw - 1) * dw - 1) // sw + 1
    i32 = as_dtype("int32")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    return te.compute(
        (n, cb, oh, ow, block),
        lambda b, c, y, x, ci: te.sum(
            E.cast(i32, xp[b, c, y * sh + ry * dh, x * sw + rx * dw, ci])
            * E.cast(i32, weight[c, ry, rx, ci]), axis=[ry, rx]),
        name="depthwise_conv2d_NCHWc_int8", tag="depthwise_conv2d_NCHWc_int8")


def qnn_matmul_packed_int8(a, weight, a_zero_point, weight_sum):
    """int32 sum((a - za) * w') of a [..., M, K] (int8 or uint8) by the packed weight: the
    integer matmul in VNNI's form.

    weight: int8 [K4/4, N, 4], w'[4g + k, n] = weight[g, n, k] (the centered weight, K padded
    to K4, a multiple of 4, with zero rows); weight_sum: int32 [N], sum over k of w'[k, n];
    a_zero_point: a number or a 0-d int32 tensor (known at run time). The reduction sums
    u8(a) * weight, u8(a) the data as uint8 (int8 + 128, the columns past K holding 0), and
    the zero point is a correction after it: sum((a - za) * w') = acc - zu * weight_sum, zu
    the zero point as uint8 (za, + 128 for int8 data)."""
    g4, n, four = get_const_tuple(weight.shape)
    k = get_const_tuple(a.shape[-1:])[0]
    if four != 4 or g4 * 4 < k or get_const_tuple(weight_sum.shape) != (n,):
        raise IRError(f"qnn_matmul_packed_int8: weight {weight.shape} and weight_sum "
                      f"{weight_sum.shape} are not [K4/4, N, 4] and [N] for K = {k}")
    signed = str(a.dtype) == "int8"
    u8, i32 = as_dtype("uint8"), as_dtype("int32")
    au = a
    if signed or g4 * 4 != k:
        def shifted(*i):
            v = a(*i[:-1], E.Min(i[-1], E.make_const(i32, k - 1)))
            v = E.cast(u8, E.cast(i32, v) + 128) if signed else v
            return te.if_then_else(i[-1] < k, v, E.make_const(u8, 0)) if g4 * 4 != k else v
        au = te.compute(tuple(a.shape[:-1]) + (g4 * 4,), shifted, name="T_data_u8",
                        tag="injective,pad")
    rg = te.reduce_axis((0, g4), name="rg")
    rk = te.reduce_axis((0, 4), name="rk")
    core = te.compute(tuple(a.shape[:-1]) + (n,), lambda *i: te.sum(
        E.cast(i32, au(*i[:-1], rg * 4 + rk)) * E.cast(i32, weight[rg, i[-1], rk]),
        axis=[rg, rk]), name="T_matmul_int8", tag="matmul_int8")
    shift = 128 if signed else 0
    if isinstance(a_zero_point, te.Tensor):
        zu = qnn_param(a_zero_point, (), 0, "int32")
        zu = zu + shift if shift else zu
    else:       # (a zero product of a constant 0 the simplifier removes)
        zu = E.make_const(i32, int(a_zero_point) + shift)
    return te.compute(core.shape, lambda *i: core(*i) - zu * weight_sum[i[-1]],
                      name="T_qnn_matmul", tag=tag.BROADCAST)


__all__ = ["dequantize", "dtype_range", "qnn_conv2d_NCHWc_int8", "qnn_conv2d_nchw",
           "qnn_depthwise_conv2d_NCHWc_int8",
           "qnn_matmul", "qnn_matmul_packed_int8", "qnn_param", "quantize", "requantize",
           "saturate"]
