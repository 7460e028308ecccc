"""Building expressions from Python values: constants, conversion, operand dtype unification
(numeric promotion, int → float, scalar → vector), casts and logical connectives.

`binary(cls, a, b)` is what the Python operators of PrimExpr call; `unify` gives two operands
one dtype. Everything here is re-exported by compiler.ir.expr.
"""
from __future__ import annotations

from typing import Optional, Union

from ..errors import IRError
from .dtype import DType, DTypeLike, as_dtype, boolean, float32, int32, int64
from .expr import (
    And,
    Broadcast,
    Cast,
    EqualOp,
    FloatImm,
    IntImm,
    IterVar,
    Not,
    NotEqualOp,
    Or,
    PrimExpr,
    StringImm,
)


def make_const(dtype: DTypeLike, value) -> PrimExpr:
    """A constant of `dtype` (a Broadcast for vector dtypes)."""
    dtype = as_dtype(dtype)
    if dtype.lanes > 1:
        return Broadcast(make_const(dtype.element_of(), value), dtype.lanes)
    if dtype.is_float:
        return FloatImm(dtype, float(value))
    if dtype.is_bool:
        return IntImm(dtype, 1 if value else 0)
    if dtype.is_integer:
        value = int(value)
        lo, hi = ((0, 2**dtype.bits - 1) if dtype.is_uint
                  else (-(2**(dtype.bits - 1)), 2**(dtype.bits - 1) - 1))
        if not lo <= value <= hi:
            raise IRError(f"the value {value} does not fit in {dtype} "
                          f"(range {lo} to {hi}); cast it or pick a wider dtype")
        return IntImm(dtype, value)
    raise IRError(f"cannot make a constant of dtype {dtype}")


def const(value, dtype: Optional[DTypeLike] = None) -> PrimExpr:
    """A constant; the dtype defaults to int32 for ints (int64 if it does not fit), float32 for
    floats and bool for bools."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = boolean
        elif isinstance(value, int):
            dtype = int32 if -(2**31) <= value < 2**31 else int64
        elif isinstance(value, float):
            dtype = float32
        else:
            raise IRError(f"cannot make a constant from {value!r}")
    return make_const(dtype, value)


def convert(value) -> PrimExpr:
    """A PrimExpr from an expression, an IterVar, a Python number, bool or string."""
    if isinstance(value, (EqualOp, NotEqualOp)):
        return value.asobject()
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):
        return value.var
    if hasattr(value, "_as_expr"):
        return value._as_expr()
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, str):
        return StringImm(value)
    try:  # numpy scalars
        import numpy as np

        if isinstance(value, np.generic):
            return const(value.item(), str(value.dtype) if value.dtype != np.bool_ else "bool")
    except ImportError:  # pragma: no cover
        pass
    raise IRError(f"cannot convert {value!r} ({type(value).__name__}) to an expression")


def _match_python(value, other: PrimExpr) -> PrimExpr:
    """A Python number as a constant of the other operand's (element) dtype where it fits."""
    if isinstance(value, bool):
        return make_const(other.dtype, value) if other.dtype.is_bool else const(value)
    if isinstance(value, int):
        if other.dtype.is_float or other.dtype.is_integer:
            return make_const(other.dtype, value)
        return const(value)
    if isinstance(value, float):
        if other.dtype.is_float:
            return make_const(other.dtype, value)
        return const(value)
    return convert(value)


def unify(a: PrimExpr, b: PrimExpr):
    """Binary operands with one dtype: numeric promotion, int→float, scalar→vector broadcast."""
    ta, tb = a.dtype, b.dtype
    if ta == tb:
        return a, b
    if ta.lanes != tb.lanes:
        if ta.lanes == 1:
            a = Broadcast(a, tb.lanes)
        elif tb.lanes == 1:
            b = Broadcast(b, ta.lanes)
        else:
            raise IRError(f"vector lanes differ: {ta} vs {tb}")
        return unify(a, b)
    ea, eb = ta.element_of(), tb.element_of()
    if ea.is_float and not eb.is_float:
        return a, cast(ta, b)
    if eb.is_float and not ea.is_float:
        return cast(tb, a), b
    if ea.code == eb.code or (ea.is_integer and eb.is_integer) or ea.is_bool or eb.is_bool:
        wide = ta if ea.bits >= eb.bits else tb
        if ea.is_float and eb.is_float and ea.code != eb.code:  # bfloat16 vs float16
            wide = float32.with_lanes(ta.lanes)
        return (a if a.dtype == wide else cast(wide, a)), (b if b.dtype == wide else cast(wide, b))
    raise IRError(f"cannot combine operands of dtype {ta} and {tb}")


def binary(cls, a, b) -> PrimExpr:
    if not isinstance(a, PrimExpr) or isinstance(a, (EqualOp, NotEqualOp)):
        a = _match_python(a, convert(b)) if not isinstance(a, (EqualOp, NotEqualOp)) \
            else a.asobject()
    if not isinstance(b, PrimExpr) or isinstance(b, (EqualOp, NotEqualOp)):
        b = _match_python(b, a) if not isinstance(b, (EqualOp, NotEqualOp)) else b.asobject()
    a, b = unify(a, b)
    return cls(a, b)


def cast(dtype: DTypeLike, value) -> PrimExpr:
    dtype = as_dtype(dtype)
    value = convert(value)
    if value.dtype == dtype:
        return value
    if value.dtype.lanes == 1 and dtype.lanes > 1:
        return Broadcast(cast(dtype.element_of(), value), dtype.lanes)
    if isinstance(value, IntImm) and dtype.lanes == 1 and (dtype.is_integer or dtype.is_float):
        return make_const(dtype, _wrap_int(value.value, dtype) if dtype.is_integer else value.value)
    return Cast(dtype, value)


def _wrap_int(value: int, dtype: DType) -> int:
    """`value` converted to an integer dtype as C does (two's-complement wrap-around)."""
    value &= (1 << dtype.bits) - 1
    if dtype.is_int and value >= 1 << (dtype.bits - 1):
        value -= 1 << dtype.bits
    return value


def logical_and(a, b) -> PrimExpr:
    return And(_as_bool(a), _as_bool(b))


def logical_or(a, b) -> PrimExpr:
    return Or(_as_bool(a), _as_bool(b))


def logical_not(a) -> PrimExpr:
    return Not(_as_bool(a))


def _as_bool(x) -> PrimExpr:
    x = convert(x)
    if not x.dtype.is_bool:
        raise IRError(f"expected a boolean expression, got {x} of dtype {x.dtype}")
    return x


def is_const_int(e, value: Optional[int] = None) -> bool:
    """Whether `e` is an integer constant (equal to `value` when given)."""
    return isinstance(e, IntImm) and (value is None or e.value == value)


ExprLike = Union[PrimExpr, int, float, bool]
