"""Structural keys of expressions: hashable tuples equal exactly when two expressions are the
same tree (variables and buffers by identity). Used to compare, deduplicate and order terms."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Tuple

from ..ir.fields import field_names
from ..tir import expr as E
from ..tir.buffer import Buffer

# How `KeyCache.key` keys a value of a class (`_kind_of`, cached per class).
_VAR, _CONST, _STR, _OBJ, _TUPLE, _NODE, _PLAIN = range(7)
_KINDS: Dict[type, int] = {}


def _kind_of(cls: type) -> int:
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = (
            _VAR if issubclass(cls, E.Var)
            else _CONST if issubclass(cls, (E.IntImm, E.FloatImm))
            else _STR if issubclass(cls, E.StringImm)
            else _OBJ if issubclass(cls, (Buffer, E.IterVar, E.CommReducer))
            else _TUPLE if issubclass(cls, tuple)
            else _NODE if issubclass(cls, E.PrimExpr) and dataclasses.is_dataclass(cls)
            else _PLAIN)
    return kind


class KeyCache:
    """Memoised `key(e)`; keeps the nodes it has seen alive so their ids stay unique."""

    def __init__(self) -> None:
        self._memo: Dict[int, Tuple[Any, tuple]] = {}

    def key(self, e: Any) -> Any:
        cls = type(e)
        kind = _KINDS.get(cls)
        if kind is None:
            kind = _kind_of(cls)
        if kind == _NODE:
            hit = self._memo.get(id(e))
            if hit is not None and hit[0] is e:
                return hit[1]
            k = (cls.__name__,) + tuple(self.key(getattr(e, name)) for name in field_names(cls))
            self._memo[id(e)] = (e, k)
            return k
        if kind == _VAR:
            return ("var", id(e))
        if kind == _CONST:
            return ("const", e.dtype, e.value)
        if kind == _STR:
            return ("str", e.value)
        if kind == _OBJ:
            return ("obj", id(e))
        if kind == _TUPLE:
            return tuple(self.key(x) for x in e)
        return e

    def equal(self, a: Any, b: Any) -> bool:
        return a is b or self.key(a) == self.key(b)


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
