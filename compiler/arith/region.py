"""Regions and bounds as bound inference asks for them: the Range each index covers
(`eval_region`, `covered_ranges`), inclusive bounds of an expression (`interval`), and bounds of
an expression whose ranges mention other ranged variables (`relax`)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import collect_vars, substitute
from .interval import _expr, bound_of_normalized, normalize_ranges
from .simplify import simplify, simplify_expr

Interval = Tuple[E.PrimExpr, E.PrimExpr]  # inclusive [lo, hi]


def eval_region(indices: Sequence, var_ranges: Optional[Dict[Any, Any]],
                shape: Optional[Sequence] = None) -> List[E.Range]:
    """For each index expression, the Range(min, extent) it covers as the ranged variables vary.

    A dimension whose index cannot be bounded (a data-dependent index) covers the whole
    dimension `[0, shape[d])` when `shape` is given, and is an error otherwise.
    """
    return _regions(indices, normalize_ranges(var_ranges), shape)


def _regions(indices: Sequence, ranges, shape: Optional[Sequence]) -> List[E.Range]:
    """`eval_region` on ranges already normalised (`normalize_ranges`)."""
    out = []
    for d, index in enumerate(indices):
        index = E.convert(index)
        lo, hi = bound_of_normalized(index, ranges, symbolic=True)
        if lo is None or hi is None:
            if shape is None:
                raise IRError(f"cannot bound the index {index} (dimension {d}) from the loop "
                              "ranges; pass the buffer's shape to cover the whole dimension")
            out.append(E.Range(E.make_const(index.dtype, 0), E.convert(shape[d])))
            continue
        lo_e = _expr(lo, index.dtype)
        extent = simplify_expr(E.binary(E.Sub, _expr(hi, index.dtype), lo_e) + 1)
        out.append(E.Range(lo_e, extent))
    return out


def covered_ranges(indices: Sequence[E.PrimExpr], var_ranges: Dict[E.Var, E.Range]
                   ) -> List[Optional[E.Range]]:
    """For each index, the Range it covers when the Vars range over `var_ranges` (None where
    the index cannot be bounded). A Range of extent 1 fixes its Var to the min (which may mention
    that same Var: a loop variable held at its current value)."""
    points = {v: r.min for v, r in var_ranges.items() if E.is_const_int(r.extent, 1)}
    ranges = normalize_ranges({v: r for v, r in var_ranges.items() if v not in points})
    out: List[Optional[E.Range]] = []
    for idx in indices:
        try:
            out.append(_regions([substitute(E.convert(idx), points)], ranges, None)[0])
        except Exception:  # noqa: BLE001 - an unboundable (data-dependent) index
            out.append(None)
    return out


def interval(e: E.PrimExpr, ranges: Dict[E.Var, Interval]) -> Optional[Interval]:
    """Inclusive bounds of `e` when each Var in `ranges` takes any value in its interval; None
    when unbounded."""
    return _interval(E.convert(e), normalize_ranges(ranges))


def _interval(e: E.PrimExpr, ranges) -> Optional[Interval]:
    """`interval` on ranges already normalised (`normalize_ranges`)."""
    lo, hi = bound_of_normalized(e, ranges, symbolic=True)
    if lo is None or hi is None:
        return None
    return _expr(lo, e.dtype), _expr(hi, e.dtype)


def relax(e: E.PrimExpr, ranges: Dict[E.Var, Interval], rounds: int = 8) -> Optional[Interval]:
    """Bounds of `e` with ranges that may themselves mention other ranged Vars."""
    norm = normalize_ranges(ranges)
    lo = hi = e
    for _ in range(rounds):
        a, b = _interval(E.convert(lo), norm), _interval(E.convert(hi), norm)
        if a is None or b is None:
            return None
        lo, hi = simplify(a[0]), simplify(b[1])
        if not any(v in ranges for v in collect_vars(lo) + collect_vars(hi)):
            return lo, hi
    return None

