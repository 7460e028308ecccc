"""Quantized models, in both encodings ONNX Runtime's quantizer writes.

QDQ: QuantizeLinear / DequantizeLinear (per tensor or per channel along `axis`, int8 / uint8 /
int32 for biases, zero point optional) become relax.qnn.quantize / dequantize around the float
operators; the graph pass quantize_to_integer (compiler/relax/transform) turns DQ -> op -> Q
into integer operators.

QOperator: QLinearConv and QLinearMatMul (and com.microsoft QGemm) become the integer
convolution / matmul with their int32 bias, requantized as ONNX Runtime's kernels do (the
multiplier x_scale * w_scale / y_scale in float32). QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearConcat, QLinearGlobalAveragePool and QLinearAveragePool (com.microsoft) dequantize,
compute in float32 and quantize, as ONNX Runtime's reference does; fused, each is one kernel.

quantize_dynamic: DynamicQuantizeLinear (uint8, the scale and zero point of [min(x, 0),
max(x, 0)] computed at run time), MatMulInteger and ConvInteger (int32 results, zero points
known or computed at run time).

A scale must be positive and finite, a zero point must fit the quantized type, and per-channel
parameters must have one value per channel: otherwise a ModelError names the node.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ...relax import expr as X
from ...relax import op as R
from .common import const, converter, norm_axis
from .nn import _padding, _window_attrs

# com.microsoft operators converted here (the importer accepts them from that domain).
CONTRIB_OPS = frozenset({"QGemm", "QLinearAdd", "QLinearMul", "QLinearSigmoid",
                         "QLinearConcat", "QLinearGlobalAveragePool", "QLinearAveragePool"})

_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
           "uint16": (0, 65535), "int32": (-(1 << 31), (1 << 31) - 1)}


# ---- parameters -----------------------------------------------------------------------------
def _scale(ctx, i: int, what: str) -> X.Expr:
    """Input i, a scale: a float32 constant checked positive and finite, or the run-time
    tensor (0-d)."""
    if not ctx.is_known(i):
        return _scalar_expr(ctx, ctx.input(i), "float32")
    s = np.asarray(ctx.const(i), dtype=np.float32)
    if s.ndim > 1:
        raise ctx.error(f"{what} scale must be a scalar or 1-D, got shape {s.shape}")
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        bad = s.reshape(-1)[~(np.isfinite(s.reshape(-1)) & (s.reshape(-1) > 0))][0]
        raise ctx.error(f"{what} scale must be positive and finite, got {bad} (input {i}, "
                        f"{ctx.node.input[i]!r})")
    return const(s.reshape(()) if s.size == 1 else s, "float32")


def _zero_point(ctx, i: int, dtype: str, what: str) -> X.Expr:
    """Input i, a zero point for values of `dtype`: an int32 constant checked to fit `dtype`
    (0 when absent), or the run-time tensor as int32 (0-d)."""
    if not ctx.has(i):
        return const(0, "int32")
    if not ctx.is_known(i):
        return _scalar_expr(ctx, R.astype(ctx.input(i), "int32"), "int32")
    z = np.asarray(ctx.const(i)).astype(np.int64)
    lo, hi = _RANGES.get(dtype, (None, None))
    if lo is not None and (np.any(z < lo) or np.any(z > hi)):
        bad = z.reshape(-1)[(z.reshape(-1) < lo) | (z.reshape(-1) > hi)][0]
        raise ctx.error(f"{what} zero point {bad} is outside the range of {dtype} "
                        f"[{lo}, {hi}] (input {i}, {ctx.node.input[i]!r})")
    if z.ndim > 1:
        raise ctx.error(f"{what} zero point must be a scalar or 1-D, got shape {z.shape}")
    return const(z.reshape(()) if z.size == 1 else z, "int32")


def _scalar_expr(ctx, e: X.Expr, dtype: str) -> X.Expr:
    """A run-time parameter: a [1] one as a 0-d tensor, a 0-d or per-channel one as it is."""
    s = e.struct_info
    if s.ndim == 1 and s.shape is not None and s.shape[0] == 1:
        return R.reshape(e, ())
    if s.ndim not in (0, 1, -1):
        raise ctx.unsupported(f"a {s.ndim}-D {dtype} parameter computed at run time")
    return e


def _channels(p: X.Expr) -> int:
    return int(p.data.size) if isinstance(p, X.Constant) and p.data.ndim == 1 else 1


def _check_channels(ctx, scale: X.Expr, zp: X.Expr, x_index: int, axis: int,
                    what: str) -> None:
    """Per-channel parameters must have as many values as input x_index has along `axis`."""
    n = max(_channels(scale), _channels(zp))
    if n == 1:
        return
    if _channels(scale) not in (1, n) or _channels(zp) not in (1, n):
        raise ctx.error(f"{what} scale has {_channels(scale)} values but its zero point has "
                        f"{_channels(zp)}")
    ndim = ctx.ndim(x_index)
    if not -ndim <= axis < ndim:
        raise ctx.error(f"{what} has {n} per-channel scales / zero points but axis {axis} is "
                        f"out of range for input {x_index} of {ndim} dims")
    dim = ctx.shape(x_index)[axis]
    if isinstance(dim, int) and dim != n:
        raise ctx.error(f"{what} has {n} per-channel scales / zero points but input "
                        f"{x_index} has {dim} channels along axis {axis}")


def _out_dtype(ctx, zp_index: int, default: str = "uint8") -> str:
    if ctx.has(zp_index):
        return ctx.dtype(zp_index)
    attr = ctx.attr("output_dtype", 0)
    if attr:
        return {2: "uint8", 3: "int8", 4: "uint16", 5: "int16"}.get(int(attr)) or \
            _unsupported_dtype(ctx, attr)
    return default


def _unsupported_dtype(ctx, attr):
    raise ctx.unsupported(f"output_dtype={attr}")


def _axis(ctx, ndim: int) -> int:
    """The node's `axis` (1 by default), normalized when it is in range (it only matters for
    per-channel parameters, which _check_channels checks)."""
    if int(ctx.attr("block_size", 0)):
        raise ctx.unsupported("blocked quantization (block_size)")
    axis = int(ctx.attr("axis", 1))
    return norm_axis(ctx, axis, ndim) if -ndim <= axis < ndim else axis


def _params(ctx, si: int, zi: int, x_index: int, dtype: str, what: str,
            axis: Optional[int] = None) -> Tuple[X.Expr, X.Expr]:
    scale, zp = _scale(ctx, si, what), _zero_point(ctx, zi, dtype, what)
    if axis is not None:
        _check_channels(ctx, scale, zp, x_index, axis, what)
    elif max(_channels(scale), _channels(zp)) > 1:
        raise ctx.error(f"{what} scale and zero point must be per tensor (scalars)")
    return scale, zp


def _tensor(ctx, i: int) -> X.Expr:
    """Input i; an initializer becomes a parameter of main (a constant once bind_params runs),
    so a dequantize of it stays in the graph for quantize_to_integer instead of being folded
    into float values while importing."""
    value = ctx.outer_value(ctx.node.input[i])
    if value is not None and value.known is not None and isinstance(value.expr, X.Constant):
        value.expr = None
    return ctx.input(i)


# ---- QDQ ------------------------------------------------------------------------------------
@converter("QuantizeLinear")
def _quantize_linear(ctx):
    ndim = ctx.ndim(0)
    axis = _axis(ctx, ndim)
    dtype = _out_dtype(ctx, 2)
    if dtype not in _RANGES:
        raise ctx.unsupported(f"quantizing to {dtype}")
    scale, zp = _params(ctx, 1, 2, 0, dtype, "y", axis)
    x = ctx.input(0)
    if ctx.dtype(0) != "float32":
        x = R.astype(x, "float32")
    return R.qnn.quantize(x, scale, zp, axis, dtype)


@converter("DequantizeLinear")
def _dequantize_linear(ctx):
    ndim = ctx.ndim(0)
    axis = _axis(ctx, ndim)
    dtype = ctx.dtype(0)
    if dtype not in _RANGES:
        raise ctx.unsupported(f"dequantizing {dtype}")
    if ctx.has(2) and ctx.dtype(2) != dtype:
        raise ctx.error(f"x has type {dtype} but its zero point {ctx.dtype(2)}")
    scale, zp = _params(ctx, 1, 2, 0, dtype, "x", axis)
    return R.qnn.dequantize(_tensor(ctx, 0), scale, zp, axis)


# ---- QOperator --------------------------------------------------------------------------------
def _known_f32(ctx, i: int) -> np.ndarray:
    _scale(ctx, i, f"input {i}")         # the checks
    return np.asarray(ctx.const(i, "a scale"), dtype=np.float32).reshape(-1)


def _multiplier(ctx, a_scale: int, b_scale: int, y_scale: Optional[int],
                alpha: float = 1.0) -> X.Constant:
    """ONNX Runtime's requantization multiplier a_scale * b_scale (* alpha) / y_scale, each
    step rounded to float32 (per channel when b_scale is)."""
    m = _known_f32(ctx, a_scale) * _known_f32(ctx, b_scale)
    if alpha != 1.0:
        m = (m * np.float32(alpha)).astype(np.float32)
    if y_scale is not None:
        m = (m / _known_f32(ctx, y_scale)).astype(np.float32)
    return const(m.reshape(()) if m.size == 1 else m, "float32")


def _int8(ctx, i: int, what: str) -> str:
    dtype = ctx.dtype(i)
    if dtype not in ("int8", "uint8"):
        raise ctx.unsupported(f"{what} of type {dtype} (int8 and uint8 are)")
    return dtype


@converter("QLinearConv")
def _qlinear_conv(ctx):
    return _conv(ctx, 0, 3, zx=2, zw=5, bias=8, scales=(1, 4, 6), zy=7)


@converter("ConvInteger")
def _conv_integer(ctx):
    return _conv(ctx, 0, 1, zx=2, zw=3)


def _conv(ctx, xi: int, wi: int, zx: int, zw: int, bias: Optional[int] = None,
          scales: Optional[tuple] = None, zy: Optional[int] = None):
    if ctx.ndim(xi) != 4:
        raise ctx.unsupported(f"a {ctx.ndim(xi) - 2}-D convolution (2-D is)")
    dx, dw = _int8(ctx, xi, "data"), _int8(ctx, wi, "a weight")
    o = ctx.shape(wi)[0]
    kernel = list(ctx.attr("kernel_shape", ctx.shape(wi)[2:]))
    strides, dil, begins, ends = _window_attrs(ctx, ctx.shape(xi)[2:], kernel)
    x_zp = _zero_point(ctx, zx, dx, "x")
    w_zp = _zero_point(ctx, zw, dw, "w")
    if _channels(x_zp) > 1:
        raise ctx.error("the data zero point must be per tensor")
    if _channels(w_zp) not in (1, o):
        raise ctx.error(f"w has {o} output channels but {_channels(w_zp)} zero points")
    acc = R.qnn.conv2d(ctx.input(xi), ctx.input(wi), x_zp, w_zp, strides=strides,
                       padding=_padding(begins, ends, 2), dilation=dil,
                       groups=int(ctx.attr("group", 1)))
    if scales is None:
        return acc
    sx, sw, sy = scales
    if _channels(_scale(ctx, sw, "w")) not in (1, o):
        raise ctx.error(f"w has {o} output channels but {_channels(_scale(ctx, sw, 'w'))} "
                        "scales")
    _scale(ctx, sx, "x")
    if bias is not None and ctx.has(bias):
        acc = R.add(ctx.emit(acc), R.reshape(ctx.input(bias), (1, -1, 1, 1)))
    dy = ctx.dtype(zy) if ctx.has(zy) else dx
    y_zp = _zero_point(ctx, zy, dy, "y")
    return R.qnn.requantize(ctx.emit(acc), _multiplier(ctx, sx, sw, sy), y_zp, 1, dy)


@converter("QLinearMatMul")
def _qlinear_matmul(ctx):
    return _matmul(ctx, 0, 3, za=2, zb=5, scales=(1, 4, 6), zy=7)


@converter("MatMulInteger")
def _matmul_integer(ctx):
    return _matmul(ctx, 0, 1, za=2, zb=3)


def _matmul(ctx, ai: int, bi: int, za: int, zb: int, scales: Optional[tuple] = None,
            zy: Optional[int] = None, b: Optional[X.Expr] = None, bias: Optional[int] = None,
            alpha: float = 1.0):
    da, db = _int8(ctx, ai, "a"), _int8(ctx, bi, "b")
    nd = ctx.ndim(ai)
    if nd < 2 or (b is None and ctx.ndim(bi) != 2):
        raise ctx.unsupported(f"a {nd}-D by {ctx.ndim(bi)}-D product (N-D by 2-D is)")
    b = ctx.input(bi) if b is None else b
    n = b.struct_info.shape[1]
    a_zp, b_zp = _zero_point(ctx, za, da, "a"), _zero_point(ctx, zb, db, "b")
    if _channels(a_zp) > 1:
        raise ctx.error("the zero point of a must be per tensor")
    if _channels(b_zp) not in (1, n):
        raise ctx.error(f"b has {n} columns but {_channels(b_zp)} zero points")
    acc = R.qnn.matmul(ctx.input(ai), b, a_zp, b_zp)
    if bias is not None and ctx.has(bias):
        acc = R.add(ctx.emit(acc), ctx.input(bias))
    if scales is None:
        return acc
    sa, sb, sy = scales
    if _channels(_scale(ctx, sb, "b")) not in (1, n):
        raise ctx.error(f"b has {n} columns but {_channels(_scale(ctx, sb, 'b'))} scales")
    if sy is None or not ctx.has(sy):       # QGemm with a float output
        m = _multiplier(ctx, sa, sb, None, alpha)
        return R.multiply(R.astype(ctx.emit(acc), "float32"), m)
    dy = ctx.dtype(zy) if ctx.has(zy) else da
    y_zp = _zero_point(ctx, zy, dy, "y")
    return R.qnn.requantize(ctx.emit(acc), _multiplier(ctx, sa, sb, sy, alpha), y_zp, nd - 1,
                            dy)


@converter("QGemm")
def _qgemm(ctx):
    if int(ctx.attr("transA", 0)):
        raise ctx.unsupported("transA=1")
    b = ctx.input(3)
    if int(ctx.attr("transB", 0)):
        b = ctx.emit(R.permute_dims(b, (1, 0)))
    return _matmul(ctx, 0, 3, za=2, zb=5, scales=(1, 4, 7 if ctx.has(7) else None), zy=8,
                   b=b, bias=6, alpha=float(ctx.attr("alpha", 1.0)))


# ---- QOperator by float: dequantize, the float operator, quantize ---------------------------
def _dq(ctx, xi: int, si: int, zi: int) -> X.Expr:
    dtype = _int8(ctx, xi, f"input {xi}")
    scale, zp = _params(ctx, si, zi, xi, dtype, f"input {xi}")
    return ctx.emit(R.qnn.dequantize(ctx.input(xi), scale, zp))


def _q(ctx, y: X.Expr, si: int, zi: int, dtype: str) -> X.Expr:
    dtype = ctx.dtype(zi) if ctx.has(zi) else dtype
    scale, zp = _params(ctx, si, zi, 0, dtype, "y")
    return R.qnn.quantize(ctx.emit(y), scale, zp, 1, dtype)


@converter("QLinearAdd", "QLinearMul")
def _qlinear_binary(ctx):
    fn = R.add if ctx.op_type == "QLinearAdd" else R.multiply
    y = fn(_dq(ctx, 0, 1, 2), _dq(ctx, 3, 4, 5))
    return _q(ctx, y, 6, 7, ctx.dtype(0))


@converter("QLinearSigmoid")
def _qlinear_sigmoid(ctx):
    return _q(ctx, R.sigmoid(_dq(ctx, 0, 1, 2)), 3, 4, ctx.dtype(0))


@converter("QLinearGlobalAveragePool")
def _qlinear_global_average_pool(ctx):
    if int(ctx.attr("channels_last", 0)):
        raise ctx.unsupported("channels_last=1")
    ndim, x = ctx.ndim(0), _dq(ctx, 0, 1, 2)
    if ndim == 4:
        y = R.nn.adaptive_avg_pool2d(x, (1, 1))
    else:
        y = R.mean(x, list(range(2, ndim)), keepdims=True)
    return _q(ctx, y, 3, 4, ctx.dtype(0))


@converter("QLinearAveragePool")
def _qlinear_average_pool(ctx):
    if ctx.ndim(0) != 4 or int(ctx.attr("channels_last", 0)):
        raise ctx.unsupported("a pool other than 2-D NCHW")
    kernel = list(ctx.attr("kernel_shape", []))
    strides, dil, begins, ends = _window_attrs(ctx, ctx.shape(0)[2:], kernel)
    y = R.nn.avg_pool2d(_dq(ctx, 0, 1, 2), pool_size=kernel, strides=strides, dilation=dil,
                        padding=_padding(begins, ends, 2),
                        ceil_mode=bool(ctx.attr("ceil_mode", 0)),
                        count_include_pad=bool(ctx.attr("count_include_pad", 0)))
    return _q(ctx, y, 3, 4, ctx.dtype(0))


@converter("QLinearConcat")
def _qlinear_concat(ctx):
    if (ctx.num_inputs - 2) % 3 or ctx.num_inputs < 5:
        raise ctx.error("inputs must be Y_scale, Y_zero_point, then (X, X_scale, "
                        "X_zero_point) triples")
    xs = [_dq(ctx, i, i + 1, i + 2) for i in range(2, ctx.num_inputs, 3)]
    axis = norm_axis(ctx, ctx.attr("axis", 1), ctx.ndim(2))
    return _q(ctx, R.concat(xs, axis), 0, 1, ctx.dtype(2))


# ---- quantize_dynamic -----------------------------------------------------------------------
@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(ctx):
    """uint8 over [min(x, 0), max(x, 0)]: scale = (hi - lo) / 255, zero point =
    round(saturate(-lo / scale)), then quantize."""
    x = ctx.input(0)
    if ctx.dtype(0) != "float32":
        raise ctx.unsupported(f"input of type {ctx.dtype(0)} (float32 is)")
    zero = const(0.0, "float32")
    lo = ctx.emit(R.minimum(R.min(x), zero))
    hi = ctx.emit(R.maximum(R.max(x), zero))
    scale = ctx.emit(R.divide(R.subtract(hi, lo), const(255.0, "float32")))
    zp_f = R.clip(R.subtract(zero, R.divide(lo, scale)), 0.0, 255.0)
    zp = ctx.emit(R.astype(R.round(ctx.emit(zp_f)), "int32"))
    y = R.qnn.quantize(x, scale, zp, 1, "uint8")
    return [y, scale, R.astype(zp, "uint8")]
