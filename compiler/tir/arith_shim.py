"""The arithmetic services lowering needs, in the shape te and the passes use them: `simplify`,
`can_prove`, `interval`, `eval_region` and `relax` (bounds of an expression whose ranges mention
other ranged variables), all on top of compiler.arith."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..arith import Analyzer, bound_of
from ..arith import eval_region as _arith_eval_region
from ..arith import simplify as _arith_simplify
from ..ir import expr as E
from ..ir.functor import collect_vars, substitute

Interval = Tuple[E.PrimExpr, E.PrimExpr]  # inclusive [lo, hi]


def simplify(node):
    """`node` (expression or statement) simplified by compiler.arith's rewrite tables."""
    return _arith_simplify(node)


def can_prove(cond) -> bool:
    return Analyzer().can_prove(E.convert(cond))


def interval(e: E.PrimExpr, ranges: Dict[E.Var, Interval]) -> Optional[Interval]:
    """Inclusive bounds of `e` when each Var in `ranges` takes any value in its interval; None
    when unbounded."""
    b = bound_of(e, ranges)
    if b.lo is None or b.hi is None:
        return None
    return b.lo, b.hi


def eval_region(indices: Sequence[E.PrimExpr], var_ranges: Dict[E.Var, E.Range]
                ) -> List[Optional[E.Range]]:
    """For each index, the Range it covers when the Vars range over `var_ranges` (None where
    the index cannot be bounded). A Range of extent 1 fixes its Var to the min (which may mention
    that same Var: a loop variable held at its current value)."""
    points = {v: r.min for v, r in var_ranges.items() if E.is_const_int(r.extent, 1)}
    ranges = {v: r for v, r in var_ranges.items() if v not in points}
    out: List[Optional[E.Range]] = []
    for idx in indices:
        try:
            out.append(_arith_eval_region([substitute(E.convert(idx), points)], ranges)[0])
        except Exception:  # noqa: BLE001 - an unboundable (data-dependent) index
            out.append(None)
    return out


def relax(e: E.PrimExpr, ranges: Dict[E.Var, Interval], rounds: int = 8) -> Optional[Interval]:
    """Bounds of `e` with ranges that may themselves mention other ranged Vars."""
    lo = hi = e
    for _ in range(rounds):
        a, b = interval(lo, ranges), interval(hi, ranges)
        if a is None or b is None:
            return None
        lo, hi = simplify(a[0]), simplify(b[1])
        if not any(v in ranges for v in collect_vars(lo) + collect_vars(hi)):
            return lo, hi
    return None
