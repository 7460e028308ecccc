"""Math intrinsics and conditional helpers for compute bodies, as `Call(dtype, "tir.<name>")`."""
from __future__ import annotations

from ..ir.dtype import as_dtype
from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.intrinsics import MATH_BINARY, MATH_UNARY
from ..tir.op import all, any  # noqa: F401,A004 - te.all / te.any
from .reduction import _max_value, _min_value

_BOOL_RESULT = ("isnan", "isinf", "isfinite")


def _unary(name):
    def f(x):
        x = E.convert(x)
        if not x.dtype.is_float and name not in _BOOL_RESULT:
            x = E.cast("float32", x)
        dtype = E.boolean.with_lanes(x.dtype.lanes) if name in _BOOL_RESULT else x.dtype
        return E.Call(dtype, f"tir.{name}", (x,))

    f.__name__ = name
    return f


def _binary(name):
    def f(x, y):
        x, y = E.convert(x), E.convert(y)
        if not x.dtype.is_float:
            x = E.cast(y.dtype if y.dtype.is_float else "float32", x)
        if y.dtype != x.dtype:
            y = E.cast(x.dtype, y)
        return E.Call(x.dtype, f"tir.{name}", (x, y))

    f.__name__ = name
    return f


_g = globals()
for _n in MATH_UNARY:
    _g[_n] = _unary(_n)
for _n in MATH_BINARY:
    _g[_n] = _binary(_n)


def abs(x):  # noqa: A001
    """|x| for ints and floats."""
    x = E.convert(x)
    if x.dtype.is_uint or x.dtype.is_bool:
        return x
    return E.Call(x.dtype, "tir.abs", (x,))


def if_then_else(cond, t, f):
    """`t if cond else f`, evaluating only the taken side (safe for out-of-range loads)."""
    cond, t, f = E.convert(cond), E.convert(t), E.convert(f)
    if not cond.dtype.is_bool:
        raise IRError(f"if_then_else: the condition {cond} is not boolean")
    t, f = E.unify(t, f)
    return E.Call(t.dtype, "tir.if_then_else", (cond, t, f))


def select(cond, t, f):
    t, f = E.unify(E.convert(t), E.convert(f))
    return E.Select(E.convert(cond), t, f)


def max_value(dtype):

    return _max_value(as_dtype(dtype))


def min_value(dtype):

    return _min_value(as_dtype(dtype))


def power(x, y):
    return _g["pow"](x, y)
