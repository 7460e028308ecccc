"""Quantized operators (`relax.qnn.*`), with ONNX's quantization arithmetic.

A quantization parameter is a scale (float) and a zero point (int32), each a 0-d tensor (per
tensor) or a 1-D one of the length of the quantized tensor's dim `axis` (per channel).

quantize(x, scale, zero_point): saturate(round_half_to_even(x / scale) + zero_point) in
    `out_dtype` (int8, uint8, int32); the division in x's float type (ONNX Runtime's).
dequantize(x, scale, zero_point): (int32(x) - zero_point) * scale, in `out_dtype` (float32).
requantize(x, multiplier, zero_point): int32 `x` to `out_dtype` as
    saturate(round_half_to_even(x * multiplier) + zero_point), computed in the multiplier's
    float type (float32: ONNX Runtime's integer kernels; float64: the exact rescale).
conv2d(data, weight, data_zero_point, weight_zero_point): NCHW int8/uint8 data by OIHW
    int8/uint8 weight -> int32 sum((data - data_zp) * (weight - weight_zp)); padding holds
    the data's zero point (a real 0). weight_zero_point: per tensor or per output channel.
matmul(a, b, a_zero_point, b_zero_point): a [..., M, K] by b [K, N] (int8/uint8) -> int32
    [..., M, N] sum((a - a_zp) * (b - b_zp)); b_zero_point per tensor or per column.
conv2d_NCHWc(data, weight): the blocked integer convolution a graph pass
    (qnn_layout_nchwc) makes: int8/uint8 data, NCHW or NCHW[ib]c with `channels` channels, by
    int8 weight [OC/ob, IC/ib, KH, KW, ib/4, ob, 4] (VNNI's groups of 4 input channels) ->
    int32 NCHW[ob]c sum(u8(data) * weight), u8 the data as uint8 (int8 + 128) and every
    position outside the data (padding, the channels past `channels`) `data_zero_point` as
    uint8; the zero-point correction is the pass's constant (topi.nn.qnn). `groups` > 1: a
    grouped convolution whose groups are whole blocks (the weight's IC is per group).
depthwise_conv2d_NCHWc(data, weight): the blocked depthwise convolution qnn_layout_nchwc
    makes: int8/uint8 data, NCHW or NCHW[b]c with `channels` channels, by int8 weight
    [C/b, KH, KW, b] -> int32 NCHW[b]c sum(data * weight) per channel, every position outside
    the data holding `data_zero_point` (topi.nn.qnn.qnn_depthwise_conv2d_NCHWc_int8).
matmul_packed(a, weight, a_zero_point, weight_sum): the integer matmul a graph pass
    (qnn_layout_nchwc) makes for a constant weight: int8/uint8 a [..., M, K] by int8 weight
    [K4/4, N, 4] (VNNI's groups of 4 of K, K padded to K4 with zero rows) -> int32
    [..., M, N] sum((a - a_zp) * w'), w'[4g + k, n] = weight[g, n, k]; weight_sum int32 [N]
    the column sums of w'; a_zero_point 0-d (topi.nn.qnn.qnn_matmul_packed_int8).
A per-channel parameter of quantize / dequantize / requantize may also have the tensor's rank
and broadcast against it (a per-channel parameter in a blocked layout).
"""
from __future__ import annotations

from ...ir.errors import IRError
from .. import shape_util as su
from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo, as_dtype_str
from .pattern import BROADCAST, OUT_ELEMWISE_FUSABLE
from .registry import axis_of, fail, fmt_shape, make_call, padding4, pair, register, tensor_arg

QUANT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32")
INT8_DTYPES = ("int8", "uint8")


def _is_float(dtype: str) -> bool:
    return dtype == "void" or dtype.startswith("float")


def _check_params(call: Call, x: TensorStructInfo, si: int, zi: int, axis: int,
                  scale_kind: str = "float") -> None:
    """Errors for a scale / zero point pair (arguments si, zi) that does not fit tensor `x`
    quantized along `axis`."""
    scale, zp = tensor_arg(call, si), tensor_arg(call, zi)
    names = call.op.get_attr("arg_names")
    if scale_kind == "float" and not _is_float(scale.dtype):
        raise fail(call, f"{names[si]} must be a float tensor, got {scale.dtype}")
    if zp.dtype not in ("void", "int32"):
        raise fail(call, f"{names[zi]} must be an int32 tensor, got {zp.dtype}")
    for i, s in ((si, scale), (zi, zp)):
        if s.ndim > 1 and s.ndim == x.ndim:
            continue
        if s.ndim not in (-1, 0, 1):
            raise fail(call, f"{names[i]} must be 0-d (per tensor) or 1-D (per channel), got "
                             f"shape {fmt_shape(s)}")
        if s.ndim == 1 and s.shape is not None and x.shape is not None and x.ndim > 0:
            a = axis_of(call, axis, x.ndim)
            n, want = s.shape[0], x.shape[a]
            if su.known_unequal(n, want) and not (isinstance(n, int) and n == 1):
                raise fail(call, f"{names[i]} has {n} values but {names[0]} has {want} along "
                                 f"axis {a} {fmt_shape(x)}")


def _infer_quantize(call: Call) -> StructInfo:
    x = tensor_arg(call, 0)
    if not _is_float(x.dtype):
        raise fail(call, f"x must be a float tensor, got {x.dtype}")
    if call.attrs.out_dtype not in QUANT_DTYPES:
        raise fail(call, f"out_dtype must be one of {QUANT_DTYPES}, got {call.attrs.out_dtype}")
    _check_params(call, x, 1, 2, call.attrs.axis)
    return TensorStructInfo(x.shape, call.attrs.out_dtype, x.ndim)


def _infer_dequantize(call: Call) -> StructInfo:
    x = tensor_arg(call, 0)
    if x.dtype != "void" and x.dtype not in QUANT_DTYPES:
        raise fail(call, f"x must be an integer tensor of {QUANT_DTYPES}, got {x.dtype}")
    _check_params(call, x, 1, 2, call.attrs.axis)
    return TensorStructInfo(x.shape, call.attrs.out_dtype, x.ndim)


def _infer_requantize(call: Call) -> StructInfo:
    x = tensor_arg(call, 0)
    if x.dtype not in ("void", "int32"):
        raise fail(call, f"x must be an int32 tensor, got {x.dtype}")
    if call.attrs.out_dtype not in QUANT_DTYPES:
        raise fail(call, f"out_dtype must be one of {QUANT_DTYPES}, got {call.attrs.out_dtype}")
    _check_params(call, x, 1, 2, call.attrs.axis)
    return TensorStructInfo(x.shape, call.attrs.out_dtype, x.ndim)


def _conv_out(size, k, stride, dil, pad_total):
    """floor((size + pad_total - dil * (k - 1) - 1) / stride) + 1"""
    span = su.add(su.mul(dil, su.sub(k, 1)), 1)
    return su.add(su.floordiv(su.sub(su.add(size, pad_total), span), stride), 1)


def _int8_operands(call: Call):
    a, b = tensor_arg(call, 0), tensor_arg(call, 1)
    names = call.op.get_attr("arg_names")
    for i, s in ((0, a), (1, b)):
        if s.dtype not in ("void",) + INT8_DTYPES:
            raise fail(call, f"{names[i]} must be int8 or uint8, got {s.dtype}")
    return a, b


def _infer_conv2d(call: Call) -> StructInfo:
    data, weight = _int8_operands(call)
    at = call.attrs
    if data.ndim not in (-1, 4) or weight.ndim not in (-1, 4):
        raise fail(call, f"data and weight must be 4-D (NCHW, OIHW), got {data.ndim} and "
                         f"{weight.ndim} dims")
    _check_params(call, data, 2, 2, 1, "none")
    _check_params(call, weight, 3, 3, 0, "none")
    if tensor_arg(call, 2).ndim not in (-1, 0):
        raise fail(call, "data_zero_point must be 0-d (per tensor)")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, "int32", 4)
    n, c, h, w = data.shape
    o, ci, kh, kw = weight.shape
    g = at.groups
    if isinstance(c, int) and isinstance(ci, int) and c != ci * g:
        raise fail(call, f"data has {c} channels but weight expects {ci * g} (groups={g})")
    pt, pl, pb, pr = at.padding
    oh = _conv_out(h, kh, at.strides[0], at.dilation[0], pt + pb)
    ow = _conv_out(w, kw, at.strides[1], at.dilation[1], pl + pr)
    return TensorStructInfo((n, o, oh, ow), "int32")


def _infer_matmul(call: Call) -> StructInfo:
    a, b = _int8_operands(call)
    if b.ndim not in (-1, 2) or a.ndim == 0 or a.ndim == 1:
        raise fail(call, f"a must have at least 2 dims and b exactly 2, got {a.ndim} and "
                         f"{b.ndim}")
    _check_params(call, b, 3, 3, 1, "none")
    if tensor_arg(call, 2).ndim not in (-1, 0):
        raise fail(call, "a_zero_point must be 0-d (per tensor)")
    if a.shape is None or b.shape is None:
        return TensorStructInfo(None, "int32", a.ndim)
    if su.known_unequal(a.shape[-1], b.shape[0]):
        raise fail(call, f"a of shape {fmt_shape(a)} has {a.shape[-1]} columns but b of shape "
                         f"{fmt_shape(b)} has {b.shape[0]} rows")
    return TensorStructInfo(tuple(a.shape[:-1]) + (b.shape[1],), "int32")


def _infer_conv2d_nchwc(call: Call) -> StructInfo:
    data, weight = _int8_operands(call)
    at = call.attrs
    if data.ndim not in (-1, 4, 5) or weight.ndim not in (-1, 7) or weight.dtype not in \
            ("void", "int8"):
        raise fail(call, "data must be NCHW or NCHW[x]c and weight int8 "
                         "[OC/ob, IC/ib, KH, KW, ib/4, ob, 4]")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, "int32", 5)
    ocb, icb, kh, kw, ig, ob, four = weight.shape
    n, h, w = data.shape[0], data.shape[2], data.shape[3]
    if at.groups > 1 and (ocb % at.groups or icb * ig * 4 * at.groups != at.channels):
        raise fail(call, f"weight {fmt_shape(weight)} does not split into {at.groups} groups "
                         f"of whole blocks of {at.channels} channels")
    if four != 4 or icb * ig * 4 * at.groups < at.channels:
        raise fail(call, f"weight {fmt_shape(weight)} does not fit {at.channels} channels")
    pt, pl, pb, pr = at.padding
    oh = _conv_out(h, kh, at.strides[0], at.dilation[0], pt + pb)
    ow = _conv_out(w, kw, at.strides[1], at.dilation[1], pl + pr)
    return TensorStructInfo((n, ocb, oh, ow, ob), "int32")


def _infer_depthwise_nchwc(call: Call) -> StructInfo:
    data, weight = _int8_operands(call)
    at = call.attrs
    if data.ndim not in (-1, 4, 5) or weight.ndim not in (-1, 4) or weight.dtype not in \
            ("void", "int8"):
        raise fail(call, "data must be NCHW or NCHW[b]c and weight int8 [C/b, KH, KW, b]")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, "int32", 5)
    cb, kh, kw, b = weight.shape
    n, h, w = data.shape[0], data.shape[2], data.shape[3]
    if cb * b < at.channels or (data.ndim == 5 and su.known_unequal(data.shape[4], b)):
        raise fail(call, f"weight {fmt_shape(weight)} does not fit data {fmt_shape(data)} of "
                         f"{at.channels} channels")
    pt, pl, pb, pr = at.padding
    oh = _conv_out(h, kh, at.strides[0], at.dilation[0], pt + pb)
    ow = _conv_out(w, kw, at.strides[1], at.dilation[1], pl + pr)
    return TensorStructInfo((n, cb, oh, ow, b), "int32")


def _infer_matmul_packed(call: Call) -> StructInfo:
    a, w = _int8_operands(call)
    zp, wsum = tensor_arg(call, 2), tensor_arg(call, 3)
    if w.dtype not in ("void", "int8") or w.ndim not in (-1, 3):
        raise fail(call, "weight must be int8 [K4/4, N, 4]")
    if a.ndim in (0, 1):
        raise fail(call, f"a must have at least 2 dims, got {a.ndim}")
    if zp.ndim not in (-1, 0) or zp.dtype not in ("void", "int32"):
        raise fail(call, "a_zero_point must be a 0-d int32 tensor")
    if wsum.ndim not in (-1, 1) or wsum.dtype not in ("void", "int32"):
        raise fail(call, "weight_sum must be a 1-D int32 tensor")
    if a.shape is None or w.shape is None:
        return TensorStructInfo(None, "int32", a.ndim)
    g4, n, four = w.shape
    if four != 4 or su.known_unequal(su.floordiv(su.add(a.shape[-1], 3), 4), g4):
        raise fail(call, f"weight {fmt_shape(w)} does not fit a of shape {fmt_shape(a)}")
    if wsum.shape is not None and su.known_unequal(wsum.shape[0], n):
        raise fail(call, f"weight_sum has {wsum.shape[0]} values for {n} columns")
    return TensorStructInfo(tuple(a.shape[:-1]) + (n,), "int32")


register("relax.qnn.quantize", _infer_quantize, ("x", "scale", "zero_point"),
         {"axis": 1, "out_dtype": "int8"}, pattern=BROADCAST)
register("relax.qnn.dequantize", _infer_dequantize, ("x", "scale", "zero_point"),
         {"axis": 1, "out_dtype": "float32"}, pattern=BROADCAST)
register("relax.qnn.requantize", _infer_requantize, ("x", "multiplier", "zero_point"),
         {"axis": 1, "out_dtype": "int8"}, pattern=BROADCAST)
register("relax.qnn.conv2d", _infer_conv2d,
         ("data", "weight", "data_zero_point", "weight_zero_point"),
         {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1},
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.qnn.conv2d_NCHWc", _infer_conv2d_nchwc, ("data", "weight"),
         {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1),
          "data_zero_point": 0, "channels": 0, "groups": 1}, pattern=OUT_ELEMWISE_FUSABLE)
register("relax.qnn.matmul", _infer_matmul, ("a", "b", "a_zero_point", "b_zero_point"), {},
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.qnn.depthwise_conv2d_NCHWc", _infer_depthwise_nchwc, ("data", "weight"),
         {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1),
          "data_zero_point": 0, "channels": 0}, pattern=OUT_ELEMWISE_FUSABLE)
register("relax.qnn.matmul_packed", _infer_matmul_packed,
         ("a", "weight", "a_zero_point", "weight_sum"), {}, pattern=OUT_ELEMWISE_FUSABLE)


def _dtype(value, what: str) -> str:
    d = as_dtype_str(value)
    if d not in QUANT_DTYPES:
        raise IRError(f"qnn.{what}: out_dtype must be one of {QUANT_DTYPES}, got {d}")
    return d


def quantize(x, scale, zero_point, axis: int = 1, out_dtype="int8") -> Call:
    """Float `x` quantized with `scale` / `zero_point` (per channel along `axis`)."""
    return make_call("relax.qnn.quantize", (x, scale, zero_point), axis=int(axis),
                     out_dtype=_dtype(out_dtype, "quantize"))


def dequantize(x, scale, zero_point, axis: int = 1, out_dtype="float32") -> Call:
    """Quantized `x` as `out_dtype` values: (x - zero_point) * scale."""
    return make_call("relax.qnn.dequantize", (x, scale, zero_point), axis=int(axis),
                     out_dtype=as_dtype_str(out_dtype))


def requantize(x, multiplier, zero_point, axis: int = 1, out_dtype="int8") -> Call:
    """int32 `x` rescaled by `multiplier` onto `zero_point`, saturated to `out_dtype`."""
    return make_call("relax.qnn.requantize", (x, multiplier, zero_point), axis=int(axis),
                     out_dtype=_dtype(out_dtype, "requantize"))


def conv2d(data, weight, data_zero_point, weight_zero_point, strides=(1, 1), padding=(0, 0),
           dilation=(1, 1), groups: int = 1) -> Call:
    """int32 convolution of quantized NCHW `data` by OIHW `weight` about their zero points."""
    return make_call("relax.qnn.conv2d", (data, weight, data_zero_point, weight_zero_point),
                     strides=pair(strides, 2, "strides"), padding=padding4(padding),
                     dilation=pair(dilation, 2, "dilation"), groups=int(groups))


def conv2d_NCHWc(data, weight, data_zero_point: int, channels: int, strides=(1, 1),
                 padding=(0, 0), dilation=(1, 1), groups: int = 1) -> Call:
    """int32 NCHW[ob]c sum(u8(data) * weight) of the blocked integer convolution."""
    return make_call("relax.qnn.conv2d_NCHWc", (data, weight), strides=pair(strides, 2,
                     "strides"), padding=padding4(padding), dilation=pair(dilation, 2,
                     "dilation"), data_zero_point=int(data_zero_point), channels=int(channels),
                     groups=int(groups))


def matmul(a, b, a_zero_point, b_zero_point) -> Call:
    """int32 product of quantized `a` [..., M, K] and `b` [K, N] about their zero points."""
    return make_call("relax.qnn.matmul", (a, b, a_zero_point, b_zero_point))


def matmul_packed(a, weight, a_zero_point, weight_sum) -> Call:
    """int32 product of quantized `a` [..., M, K] about its zero point and the packed
    centered weight [K4/4, N, 4] (weight_sum: its column sums)."""
    return make_call("relax.qnn.matmul_packed", (a, weight, a_zero_point, weight_sum))


def depthwise_conv2d_NCHWc(data, weight, data_zero_point: int, channels: int, strides=(1, 1),
                           padding=(0, 0), dilation=(1, 1)) -> Call:
    """int32 NCHW[b]c sum(data * weight) of the blocked depthwise convolution."""
    return make_call("relax.qnn.depthwise_conv2d_NCHWc", (data, weight),
                     strides=pair(strides, 2, "strides"), padding=padding4(padding),
                     dilation=pair(dilation, 2, "dilation"),
                     data_zero_point=int(data_zero_point), channels=int(channels))
