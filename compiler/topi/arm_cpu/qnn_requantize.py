"""Requantize (and quantize) on Cortex-M: single precision where it decides the result, double
where it may not; rounding by the FPU instead of a library call.

ONNX's requantize is saturate(round_half_to_even(x * multiplier) + zero_point). The graph's
multiplier is often float64 (the product of the float32 scales, kept exact), and a Cortex-M4F
or M7 FPU computes single precision only: each double multiply and rounding is a library call
of dozens of instructions, for every output of every convolution. This kernel computes

    v = float32(x) * float32(multiplier),  clamped to [-1024, 1024]
    r = (v + 1.5 * 2**23) - 1.5 * 2**23    (v rounded half to even by the FPU's default mode)

and takes r unless v lies within TIE_MARGIN of a half-integer, where it computes the reference
formula in the multiplier's own type. The single precision error is below 3 * 2**-24 * |v| <=
2**-12 for |v| <= 1024 (x converts exactly below 2**24 and with a relative 2**-24 above), so
away from a half-integer both round alike; and |v| >= 1024 saturates every int8/uint8 output
whatever the zero point, in both. So the outputs are the reference formula's, bit for bit, in
the multiplier's type (float32 or float64; for float32, r is the reference's value itself and no
second formula is needed). The clamp also sits between the multiply and the
add, so a C compiler contracting floating point (-ffp-contract=fast) has no multiply-add to
fuse.
"""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ...tir import expr as E
from .. import tag
from ..nn.qnn import qnn_param, saturate

# |v| at and above which every int8/uint8 result saturates, whatever the zero point.
CLAMP = 1024.0
# 1.5 * 2**23: adding and subtracting it rounds a float32 of magnitude below 2**22 to an
# integer, half to even.
ROUND_MAGIC = 12582912.0
# Distance from a half-integer within which the reference formula decides.
TIE_MARGIN = 2.0 ** -10


def _clamp(v):
    f32 = as_dtype("float32")
    return E.Min(E.Max(v, E.make_const(f32, -CLAMP)), E.make_const(f32, CLAMP))


def _round_clamped(v):
    """float32 `v` clamped to [-CLAMP, CLAMP] and rounded half to even (the FPU's default
    rounding of the add)."""
    magic = E.make_const(as_dtype("float32"), ROUND_MAGIC)
    return (_clamp(v) + magic) - magic


def quantize_cortex_m(x, scale, zero_point, axis: int = 1, out_dtype: str = "int8"):
    """topi.nn.qnn.quantize of float32 `x`: saturate(round_half_to_even(x / scale) +
    zero_point), the same values, rounded by the add of ROUND_MAGIC instead of a library call
    (x / scale clamped to [-CLAMP, CLAMP] first, where every result saturates)."""
    if str(x.dtype) != "float32":
        raise IRError(f"quantize_cortex_m: the data is {x.dtype}; float32 expected")
    axis = axis % max(x.ndim, 1)

    def f(*i):
        r = _round_clamped(x(*i) / qnn_param(scale, i, axis, "float32"))
        return saturate(r + qnn_param(zero_point, i, axis, "float32"), out_dtype)

    return te.compute(x.shape, f, name="T_quantize", tag=tag.BROADCAST)


def requantize_cortex_m(x, multiplier, zero_point, axis: int = 1, out_dtype: str = "int8",
                        compute_dtype: str = "float32"):
    """topi.nn.qnn.requantize(x, multiplier, zero_point, axis, out_dtype, compute_dtype), the
    same values (module docstring), in single precision but near a half-integer."""
    axis = axis % max(x.ndim, 1)
    f32 = as_dtype("float32")
    m32 = multiplier
    if isinstance(multiplier, te.Tensor) and multiplier.ndim == 1 and \
            str(multiplier.dtype) != "float32":
        # one conversion per channel and call, not one per output (a library call in double)
        m32 = te.compute(multiplier.shape, lambda c: E.cast(f32, multiplier[c]),
                         name="T_multiplier_f32", tag="multiplier_f32")

    def f(*i):
        v = E.cast(f32, x(*i)) * qnn_param(m32, i, axis, "float32")
        r = _round_clamped(v)
        d = _clamp(v) - r
        limit = E.make_const(f32, 0.5 - TIE_MARGIN)
        near_half = te.any(d >= limit, d <= -limit)
        fast = saturate(r + qnn_param(zero_point, i, axis, "float32"), out_dtype)
        if compute_dtype == "float32":
            return fast  # r is v rounded, and v is the reference's (clamped where it saturates)
        w = E.cast(as_dtype(compute_dtype), x(*i)) * qnn_param(multiplier, i, axis, compute_dtype)
        exact = saturate(te.nearbyint(w) + qnn_param(zero_point, i, axis, compute_dtype),
                          out_dtype)
        return te.if_then_else(near_half, exact, fast)

    return te.compute(x.shape, f, name="T_requantize", tag=tag.BROADCAST)


__all__ = ["quantize_cortex_m", "requantize_cortex_m"]
