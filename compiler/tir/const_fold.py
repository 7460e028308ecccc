"""Constant folding with the target's semantics.

Integers wrap to their dtype (two's complement for intN, modulo 2**N for uintN); `FloorDiv` and
`FloorMod` follow Python's floor semantics, `Div` and `Mod` C's truncation; floats use true
division and are rounded to their precision. Division by zero is never folded.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, Optional

import numpy as np

from ..ir.dtype import DType
from . import expr as E


def wrap_int(dtype: DType, value: int) -> int:
    """`value` as the dtype's integer type holds it (bool: 0 or 1)."""
    if dtype.is_bool:
        return 1 if value else 0
    bits = dtype.bits
    value &= (1 << bits) - 1
    if dtype.is_int and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def round_float(dtype: DType, value: float) -> float:
    """`value` rounded to the dtype's float precision."""
    if dtype.bits == 64 or math.isnan(value) or math.isinf(value):
        return float(value)
    with np.errstate(over="ignore"):
        if dtype.is_bfloat:
            bits = np.array([value], dtype=np.float32).view(np.uint32)[0]
            bits = (int(bits) + 0x7FFF + ((int(bits) >> 16) & 1)) & 0xFFFF0000
            return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
        return float(np.float16(value) if dtype.bits == 16 else np.float32(value))


def const_of(dtype: DType, value) -> E.PrimExpr:
    """A constant of a scalar dtype, wrapped or rounded to it."""
    if dtype.is_float:
        return E.FloatImm(dtype, round_float(dtype, float(value)))
    return E.IntImm(dtype, wrap_int(dtype, int(value)))


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a: int, b: int) -> int:
    return a - b * trunc_div(a, b)


def _float_div(a: float, b: float) -> Optional[float]:
    return None if b == 0 else a / b


# op class -> (integer function, float function); None means "do not fold".
_ARITH: Dict[type, tuple] = {
    E.Add: (lambda a, b: a + b, lambda a, b: a + b),
    E.Sub: (lambda a, b: a - b, lambda a, b: a - b),
    E.Mul: (lambda a, b: a * b, lambda a, b: a * b),
    E.Div: (lambda a, b: None if b == 0 else trunc_div(a, b), _float_div),
    E.Mod: (lambda a, b: None if b == 0 else trunc_mod(a, b),
            lambda a, b: None if b == 0 else math.fmod(a, b)),
    E.FloorDiv: (lambda a, b: None if b == 0 else a // b,
                 lambda a, b: None if b == 0 else math.floor(a / b)),
    E.FloorMod: (lambda a, b: None if b == 0 else a % b,
                 lambda a, b: None if b == 0 else a - b * math.floor(a / b)),
    E.Min: (min, min),
    E.Max: (max, max),
}
_CMP: Dict[type, Callable] = {
    E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b,
}


def _is_const(e) -> bool:
    return isinstance(e, (E.IntImm, E.FloatImm)) and e.dtype.lanes == 1


def fold(e: E.PrimExpr) -> Optional[E.PrimExpr]:
    """The constant `e` evaluates to when its operands are constants; None otherwise."""
    if isinstance(e, E.BinaryOp) and _is_const(e.a) and _is_const(e.b):
        a, b = e.a.value, e.b.value
        if type(e) in _CMP:
            return E.IntImm(e.dtype, 1 if _CMP[type(e)](a, b) else 0)
        if isinstance(e, E.And):
            return E.IntImm(e.dtype, 1 if (a and b) else 0)
        if isinstance(e, E.Or):
            return E.IntImm(e.dtype, 1 if (a or b) else 0)
        fns = _ARITH.get(type(e))
        if fns is None:
            return None
        if e.dtype.is_float:
            value = fns[1](float(a), float(b))
        else:
            value = fns[0](int(a), int(b))
        return None if value is None else const_of(e.dtype, value)
    if isinstance(e, E.Not) and _is_const(e.a):
        return E.IntImm(e.dtype, 0 if e.a.value else 1)
    if isinstance(e, E.Select):
        cond = e.condition.value if isinstance(e.condition, E.Broadcast) else e.condition
        if _is_const(cond):      # a constant condition, or one broadcast to every lane
            return e.true_value if cond.value else e.false_value
    if isinstance(e, E.Cast) and _is_const(e.value) and e.dtype.lanes == 1:
        return _fold_cast(e.dtype, e.value)
    return None


def _fold_cast(dtype: DType, c) -> Optional[E.PrimExpr]:
    v = c.value
    if dtype.is_float:
        return const_of(dtype, float(v))
    if dtype.is_bool:
        return E.IntImm(dtype, 1 if v else 0)
    if dtype.is_integer:
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                return None
            v = int(v)  # C truncation toward zero
        return const_of(dtype, v)
    return None
