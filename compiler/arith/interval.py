"""Interval (bound) analysis of integer expressions.

`bound_of(e, var_ranges)` gives an `Interval(lo, hi)` (inclusive; an end is None when unbounded)
whose ends are expressions, possibly symbolic: with `i` in `[0, n-1]`, `i + 1` lies in
`[1, n]`. A variable without a range stands for itself (a point). `const_bound` gives integer
ends (a variable without a range is unbounded, a SizeVar non-negative). `eval_region` turns the
indices of an access into the Ranges it touches, for bound inference.

`var_ranges` maps a Var (or IterVar) to a `Range(min, extent)`, an `Interval`, or an inclusive
`(lo, hi)` pair of ints or expressions.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

from ..tir import expr as E
from ..tir.const_fold import trunc_div
from ..tir.functor import collect_vars

End = Union[int, E.PrimExpr, None]


@dataclass(frozen=True)
class Interval:
    """`[lo, hi]`, inclusive; None is -inf / +inf."""

    lo: Optional[E.PrimExpr]
    hi: Optional[E.PrimExpr]

    def is_point(self) -> bool:
        return self.lo is not None and (self.lo is self.hi or (
            isinstance(self.lo, E.IntImm) and isinstance(self.hi, E.IntImm)
            and self.lo.value == self.hi.value))


class IntBound(NamedTuple):
    """Integer bounds, inclusive; None is unbounded."""

    lo: Optional[int]
    hi: Optional[int]

    @property
    def min_value(self) -> Optional[int]:
        return self.lo

    @property
    def max_value(self) -> Optional[int]:
        return self.hi


def normalize_ranges(var_ranges: Optional[Dict[Any, Any]]) -> Dict[E.Var, Tuple[End, End]]:
    """Var -> (lo, hi) inclusive ends (ints where constant)."""
    out: Dict[E.Var, Tuple[End, End]] = {}
    for v, r in (var_ranges or {}).items():
        if isinstance(v, E.IterVar):
            v = v.var
        if isinstance(r, E.IterVar):
            r = r.dom
        if isinstance(r, E.Range):
            lo = _end(r.min)
            hi = _add(lo, _add(_end(r.extent), -1, r.min.dtype), r.min.dtype)
        elif isinstance(r, Interval):
            lo, hi = _end(r.lo), _end(r.hi)
        elif isinstance(r, IntBound):
            lo, hi = r.lo, r.hi
        else:
            lo, hi = (_simplified_end(x) for x in r)
        out[v] = (lo, hi)
    return out


# ---- arithmetic on ends ---------------------------------------------------------------------
def _end(x) -> End:
    if x is None or isinstance(x, int):
        return x
    x = E.convert(x)
    return x.value if isinstance(x, E.IntImm) and not x.dtype.is_bool else x


def _simplified_end(x) -> End:
    if x is None or isinstance(x, int):
        return x
    x = _end(x)
    return x if isinstance(x, int) else _lite(x)


def _expr(x: End, dtype) -> Optional[E.PrimExpr]:
    if x is None or isinstance(x, E.PrimExpr):
        return x
    return E.make_const(dtype, x)


# The simplifier (arith/simplify.py, which itself asks this module for bounds) registers itself
# here when it is imported; until then ends are kept as built.
_simplify: Optional[Callable[[E.PrimExpr], E.PrimExpr]] = None


def use_simplifier(simplify_expr: Callable[[E.PrimExpr], E.PrimExpr]) -> None:
    """Makes `simplify_expr` the simplifier applied to symbolic interval ends."""
    global _simplify
    _simplify = simplify_expr


def _lite(e: E.PrimExpr) -> End:
    return _end(_simplify(e) if _simplify is not None else e)


def _build(cls, a: End, b: End, dtype) -> End:
    return _lite(E.binary(cls, _expr(a, dtype), _expr(b, dtype)))


def _add(a: End, b: End, dtype) -> End:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return _build(E.Add, a, b, dtype)


def _mul(a: End, k: int, dtype) -> End:
    if a is None:
        return None
    return a * k if isinstance(a, int) else _build(E.Mul, a, k, dtype)


def _div(a: End, k: int, dtype, floor: bool) -> End:
    if a is None:
        return None
    if isinstance(a, int):
        return a // k if floor else trunc_div(a, k)
    return _build(E.FloorDiv if floor else E.Div, a, k, dtype)


def _minmax(a: End, b: End, dtype, is_min: bool, none_wins: bool) -> End:
    if a is None or b is None:
        return None if none_wins else (b if a is None else a)
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if is_min else max(a, b)
    return _build(E.Min if is_min else E.Max, a, b, dtype)


def _dtype_range(dtype) -> Tuple[End, End]:
    if dtype.is_bool:
        return (0, 1)
    if dtype.is_uint:
        return (0, (1 << dtype.bits) - 1) if dtype.bits <= 16 else (0, None)
    if dtype.is_int and dtype.bits <= 16:
        return (-(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1)
    return (None, None)


# ---- the analysis ---------------------------------------------------------------------------
def _is_point(bounds, x) -> bool:
    """Whether `bounds` are the point `x` itself (a free variable, or a constant)."""
    if isinstance(x, E.IntImm):
        return bounds == (x.value, x.value)
    return bounds[0] is x and bounds[1] is x


class _Bounder:
    def __init__(self, ranges: Dict[E.Var, Tuple[End, End]], symbolic: bool):
        self.ranges, self.symbolic = ranges, symbolic
        self.relaxing: List[E.Var] = []

    def point(self, e) -> Tuple[End, End]:
        x = _end(e)
        return (x, x)

    def opaque(self, e) -> Tuple[End, End]:
        if self.symbolic and not any(v in self.ranges for v in collect_vars(e)):
            return self.point(e)
        return _dtype_range(e.dtype)

    def bound(self, e: E.PrimExpr) -> Tuple[End, End]:
        if isinstance(e, E.IntImm):
            return (e.value, e.value)
        if not (e.dtype.is_integer or e.dtype.is_bool):
            return self.point(e) if self.symbolic else (None, None)
        method = getattr(self, "b_" + type(e).__name__, None)
        if method is None:
            if isinstance(e, E.CmpOp):
                return (0, 1)
            return self.opaque(e)
        return method(e)

    def b_Var(self, v: E.Var) -> Tuple[End, End]:
        r = self.ranges.get(v)
        if r is None or any(v is x for x in self.relaxing):
            if self.symbolic:  # unranged, or a range that mentions v itself: v stands for v
                return self.point(v)
            return (0, None) if isinstance(v, E.SizeVar) else _dtype_range(v.dtype)
        self.relaxing.append(v)
        try:
            lo = r[0] if r[0] is None or isinstance(r[0], int) else self.bound(r[0])[0]
            hi = r[1] if r[1] is None or isinstance(r[1], int) else self.bound(r[1])[1]
        finally:
            self.relaxing.pop()
        return (lo, hi)

    b_SizeVar = b_Var

    def _pair(self, e):
        a, b = self.bound(e.a), self.bound(e.b)
        if self.symbolic and _is_point(a, e.a) and _is_point(b, e.b):
            return None  # all points (a constant is one): the node bounds itself
        return a, b

    def b_Add(self, e):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        return (_add(al, bl, e.dtype), _add(ah, bh, e.dtype))

    def b_Sub(self, e):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        return (_add(al, _mul(bh, -1, e.dtype), e.dtype), _add(ah, _mul(bl, -1, e.dtype), e.dtype))

    def b_Mul(self, e):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        if isinstance(bl, int) and bl == bh:
            return self._scale(al, ah, bl, e.dtype)
        if isinstance(al, int) and al == ah:
            return self._scale(bl, bh, al, e.dtype)
        if all(isinstance(x, int) for x in (al, ah, bl, bh)):
            c = (al * bl, al * bh, ah * bl, ah * bh)
            return (min(c), max(c))
        if isinstance(al, int) and isinstance(bl, int) and al >= 0 and bl >= 0 \
                and all(isinstance(x, int) or x is None for x in (ah, bh)):
            return (al * bl, None if ah is None or bh is None else ah * bh)
        return (None, None)

    def _scale(self, lo, hi, k, dtype):
        lo, hi = _mul(lo, k, dtype), _mul(hi, k, dtype)
        return (lo, hi) if k >= 0 else (hi, lo)

    def _div(self, e, floor: bool):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        if isinstance(bl, int) and bl == bh and bl != 0:
            lo, hi = _div(al, bl, e.dtype, floor), _div(ah, bl, e.dtype, floor)
            return (lo, hi) if bl > 0 else (hi, lo)
        if isinstance(bl, int) and bl > 0 and isinstance(al, int) and al >= 0 \
                and (ah is None or isinstance(ah, int)):
            return (0 if bh is None else al // bh if isinstance(bh, int) else 0,
                    None if ah is None else ah // bl)
        return (None, None)

    def b_FloorDiv(self, e):
        return self._div(e, True)

    def b_Div(self, e):
        return self._div(e, False)

    def _mod(self, e, floor: bool):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        if not (isinstance(bl, int) and bl > 0 and (bh is None or isinstance(bh, int))):
            if isinstance(bl, int) and bl == bh and bl < 0 and floor:
                return (bl + 1, 0)
            return (None, None)
        top = None if bh is None else bh - 1
        a_int = isinstance(al, int) and isinstance(ah, int)
        if a_int and bl == bh and al // bl == ah // bl and (floor or al >= 0):
            return (al % bl, ah % bl)
        if a_int and al >= 0 and ah < bl:
            return (al, ah)
        if floor or (isinstance(al, int) and al >= 0):
            return (0, top)
        if isinstance(ah, int) and ah <= 0:
            return (None if top is None else -top, 0)
        return (None if top is None else -top, top)

    def b_FloorMod(self, e):
        return self._mod(e, True)

    def b_Mod(self, e):
        return self._mod(e, False)

    def _minmax(self, e, is_min: bool):
        p = self._pair(e)
        if p is None:
            return self.point(e)
        (al, ah), (bl, bh) = p
        if is_min:
            return (_minmax(al, bl, e.dtype, True, True), _minmax(ah, bh, e.dtype, True, False))
        return (_minmax(al, bl, e.dtype, False, False), _minmax(ah, bh, e.dtype, False, True))

    def b_Min(self, e):
        return self._minmax(e, True)

    def b_Max(self, e):
        return self._minmax(e, False)

    def b_Select(self, e):
        (al, ah), (bl, bh) = self.bound(e.true_value), self.bound(e.false_value)
        if self.symbolic and al is e.true_value and ah is al and bl is e.false_value \
                and bh is bl and not any(v in self.ranges for v in collect_vars(e.condition)):
            return self.point(e)
        return (_minmax(al, bl, e.dtype, True, True), _minmax(ah, bh, e.dtype, False, True))

    def b_Cast(self, e):
        src, dst = e.value.dtype, e.dtype
        if src.is_bool or (src.is_integer and dst.is_integer and (
                (dst.bits > src.bits and (dst.is_int or src.is_uint))
                or (dst.bits == src.bits and dst.code == src.code))):
            lo, hi = self.bound(e.value)
            if self.symbolic and lo is e.value and hi is e.value:
                return self.point(e)
            return (_expr_cast(lo, dst), _expr_cast(hi, dst))
        return self.opaque(e)

    def b_Let(self, e):
        saved = self.ranges
        self.ranges = dict(saved)
        self.ranges[e.var] = self.bound(e.value)
        try:
            return self.bound(e.body)
        finally:
            self.ranges = saved

    def b_Broadcast(self, e):
        return self.bound(e.value)

    def b_Ramp(self, e):
        bl, bh = self.bound(e.base)
        sl, sh = self._scale(*self.bound(e.stride), e.lanes - 1, e.dtype) \
            if e.lanes > 1 else (0, 0)
        return (_minmax(bl, _add(bl, sl, e.base.dtype), e.base.dtype, True, True),
                _minmax(bh, _add(bh, sh, e.base.dtype), e.base.dtype, False, True))

    def b_Not(self, e):
        return (0, 1)

    b_And = b_Or = b_Not


def _expr_cast(x: End, dtype) -> End:
    if x is None or isinstance(x, int):
        return x
    return _lite(E.cast(dtype, x))


def bound_of(expr, var_ranges: Optional[Dict[Any, Any]] = None) -> Interval:
    """Symbolic inclusive bounds of `expr` given the ranges of some variables."""
    expr = E.convert(expr)
    lo, hi = _Bounder(normalize_ranges(var_ranges), symbolic=True).bound(expr)
    return Interval(_expr(lo, expr.dtype), _expr(hi, expr.dtype))


def bound_of_normalized(expr: E.PrimExpr, ranges: Dict[E.Var, Tuple[End, End]],
                        symbolic: bool) -> Tuple[End, End]:
    """`bound_of` / `const_bound` on ranges already normalised (ends as ints or expressions)."""
    return _Bounder(ranges, symbolic).bound(expr)


def const_bound(expr, var_ranges: Optional[Dict[Any, Any]] = None) -> IntBound:
    """Integer inclusive bounds of `expr` (None where unbounded)."""
    expr = E.convert(expr)
    lo, hi = _Bounder(normalize_ranges(var_ranges), symbolic=False).bound(expr)
    return IntBound(lo if isinstance(lo, int) else None, hi if isinstance(hi, int) else None)
