"""Structural keys of expressions: hashable tuples equal exactly when two expressions are the
same tree (variables and buffers by identity). Used to compare, deduplicate and order terms."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Tuple

from ..ir.fields import field_names
from ..tir import expr as E
from ..tir.buffer import Buffer


class KeyCache:
    """Memoised `key(e)`; keeps the nodes it has seen alive so their ids stay unique."""

    def __init__(self) -> None:
        self._memo: Dict[int, Tuple[Any, tuple]] = {}

    def key(self, e: Any) -> Any:
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        k = self._compute(e)
        if isinstance(e, E.PrimExpr) and not isinstance(e, (E.Var, E.IntImm)):
            self._memo[id(e)] = (e, k)
        return k

    def equal(self, a: Any, b: Any) -> bool:
        return a is b or self.key(a) == self.key(b)

    def _compute(self, e: Any) -> Any:
        if isinstance(e, E.Var):
            return ("var", id(e))
        if isinstance(e, (E.IntImm, E.FloatImm)):
            return ("const", e.dtype, e.value)
        if isinstance(e, E.StringImm):
            return ("str", e.value)
        if isinstance(e, (Buffer, E.IterVar, E.CommReducer)):
            return ("obj", id(e))
        if isinstance(e, tuple):
            return tuple(self.key(x) for x in e)
        if isinstance(e, E.PrimExpr) and dataclasses.is_dataclass(e):
            return (type(e).__name__,) + tuple(
                self.key(getattr(e, name)) for name in field_names(type(e)))
        if isinstance(e, E.DType.__class__) or e is None or isinstance(e, (int, float, str)):
            return e
        return e


def order_key(e: Any, names: Optional[Dict[int, int]] = None) -> tuple:
    """A deterministic sort key (variables by name, then structure), independent of ids."""
    if isinstance(e, E.Var):
        return (1, e.name, str(e.dtype))
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return (0, str(e.dtype), float(e.value))
    if isinstance(e, E.BufferLoad):
        return (2, "load", e.buffer.name, tuple(order_key(i) for i in e.indices))
    if isinstance(e, E.PrimExpr) and dataclasses.is_dataclass(e):
        kids = tuple(order_key(getattr(e, name)) for name in field_names(type(e))
                     if isinstance(getattr(e, name), (E.PrimExpr, tuple)))
        return (3, type(e).__name__, kids)
    if isinstance(e, tuple):
        return (4, tuple(order_key(x) for x in e))
    return (5, str(type(e).__name__))
