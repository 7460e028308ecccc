"""`Analyzer`: a set of variable bounds and the questions passes ask under them."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..tir import expr as E
from .interval import IntBound, Interval, bound_of, normalize_ranges
from .simplify import Context, _fixed_point


class Analyzer:
    """Holds `var -> range` facts; `simplify`, `can_prove`, `const_int_bound` use them.

        ana = Analyzer()
        ana.bind(i, Range(0, 16))          # or ana.bind(i, (0, 15)) inclusive
        ana.can_prove(i < 16)              # True
    """

    def __init__(self, bounds: Optional[Dict[Any, Any]] = None):
        self._ctx = Context(bounds)

    @property
    def ranges(self) -> Dict[E.Var, Any]:
        """The bound variables and their inclusive (lo, hi) ends."""
        return dict(self._ctx.ranges)

    def bind(self, var, rng) -> None:
        """`var` (a Var or IterVar) lies in `rng`: a Range, an Interval, an inclusive pair, or a
        single value."""
        if isinstance(var, E.IterVar):
            var = var.var
        if isinstance(rng, (int, E.PrimExpr)):  # a known value: the point [v, v]
            rng = (rng, rng)
        (lo, hi), = normalize_ranges({var: rng}).values()
        self._ctx.bind(var, lo, hi)

    def simplify(self, e) -> E.PrimExpr:
        return _fixed_point(E.convert(e), self._ctx)

    def can_prove(self, cond) -> bool:
        """Whether `cond` is provably true under the bound ranges."""
        return E.is_const_int(self.simplify(cond), 1)

    def can_prove_equal(self, a, b) -> bool:
        a, b = E.convert(a), E.convert(b)
        if a.dtype.is_integer and b.dtype.is_integer:
            return E.is_const_int(self.simplify(E.binary(E.Sub, a, b)), 0)
        return self._ctx.keys.equal(self.simplify(a), self.simplify(b))

    def const_int_bound(self, e) -> IntBound:
        """Integer bounds (None where unbounded) of `e`."""
        return self._ctx.int_bound(E.convert(e))

    def int_set(self, e) -> Interval:
        """Symbolic bounds of `e`."""
        return bound_of(e, self._ctx.ranges)


def can_prove(cond) -> bool:
    """Whether `cond` holds for every value of its variables (no bounds known)."""
    return Analyzer().can_prove(E.convert(cond))
