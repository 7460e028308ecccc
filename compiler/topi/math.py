"""Elementwise math (tag ELEMWISE): one output element from the same element of the input.

    y = topi.exp(x);  y = topi.clip(x, 0.0, 6.0);  y = topi.cast(x, "float16")
"""
from __future__ import annotations

from .. import te
from ..ir.dtype import as_dtype
from ..tir import expr as E
from . import tag


def _elemwise(name: str, fn, x):
    return te.compute(x.shape, lambda *i: fn(x(*i)), name=f"T_{name}", tag=tag.ELEMWISE)


def _make(name: str, fn, doc: str):
    def op(x):
        return _elemwise(name, fn, x)

    op.__name__ = name
    op.__doc__ = doc
    return op


exp = _make("exp", te.exp, "e ** x")
log = _make("log", te.log, "natural logarithm")
log2 = _make("log2", te.log2, "base-2 logarithm")
log10 = _make("log10", te.log10, "base-10 logarithm")
sqrt = _make("sqrt", te.sqrt, "square root")
rsqrt = _make("rsqrt", te.rsqrt, "1 / sqrt(x)")
sigmoid = _make("sigmoid", te.sigmoid, "1 / (1 + exp(-x))")
tanh = _make("tanh", te.tanh, "hyperbolic tangent")
erf = _make("erf", te.erf, "the Gauss error function")
sin = _make("sin", te.sin, "sine")
cos = _make("cos", te.cos, "cosine")
floor = _make("floor", te.floor, "round towards -inf")
ceil = _make("ceil", te.ceil, "round towards +inf")
trunc = _make("trunc", te.trunc, "round towards 0")
# numpy and ONNX round halves to even: that is nearbyint under the default rounding mode.
round = _make("round", te.nearbyint, "round to nearest, halves to even (numpy.round)")  # noqa: A001
isnan = _make("isnan", te.isnan, "x is NaN (bool)")
abs = _make("abs", te.abs, "|x|")  # noqa: A001


def negative(x):
    """-x"""
    return _elemwise("negative", lambda v: E.make_const(v.dtype, 0) - v, x)


def identity(x):
    """A copy of x."""
    return _elemwise("identity", lambda v: v, x)


def sign(x):
    """-1, 0 or 1 of x's dtype."""
    def f(v):
        zero, one = E.make_const(v.dtype, 0), E.make_const(v.dtype, 1)
        return te.select(v > zero, one, te.select(v < zero, zero - one, zero))

    return _elemwise("sign", f, x)


def clip(x, a_min, a_max):
    """min(max(x, a_min), a_max)."""
    def f(v):
        return E.Min(E.Max(v, E.make_const(v.dtype, a_min)), E.make_const(v.dtype, a_max))

    return _elemwise("clip", f, x)


def cast(x, dtype):
    """x converted to `dtype` (a Tensor, or a scalar expression)."""
    dtype = as_dtype(dtype)
    if not isinstance(x, te.Tensor):
        return E.cast(dtype, E.convert(x))
    return _elemwise("cast", lambda v: E.cast(dtype, v), x)


def fast_erf(x):
    """erf(x) (kept for TVM's name; the same intrinsic)."""
    return erf(x)
