"""Attrs: the immutable attributes of an operator call (`call.attrs.strides`, as in TVM).

Values are normalized to plain immutable Python values: lists become tuples, dtypes plain
strs, numpy scalars Python scalars. The keys keep the order the operator registered them in,
which is also the order the printer writes them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Tuple

import numpy as np

from ..ir.node import Node
from ..tir import expr as E


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, E.IntImm):
        return int(value.value)
    if isinstance(value, E.FloatImm):
        return float(value.value)
    if isinstance(value, str):
        return str.__str__(value) if type(value) is not str else value
    return value


@dataclass(frozen=True, eq=False, slots=True)
class Attrs(Node):
    """Ordered (key, value) pairs, read as attributes or items."""

    items_: Tuple[Tuple[str, Any], ...] = ()

    @staticmethod
    def of(mapping: Mapping[str, Any]) -> "Attrs":
        return Attrs(tuple((str(k), _plain(v)) for k, v in mapping.items()))

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        for k, v in self.items_:
            if k == key:
                return v
        raise AttributeError(f"attrs have no {key!r} (they have {list(self.keys())})")

    def __getitem__(self, key: str) -> Any:
        for k, v in self.items_:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.items_:
            if k == key:
                return v
        return default

    def __contains__(self, key: str) -> bool:
        return any(k == key for k, _ in self.items_)

    def keys(self) -> Iterator[str]:
        return (k for k, _ in self.items_)

    def items(self) -> Iterator[Tuple[str, Any]]:
        return iter(self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def with_values(self, **changes: Any) -> "Attrs":
        """A copy with some values replaced (keys must exist)."""
        out = dict(self.items_)
        for k, v in changes.items():
            if k not in out:
                raise KeyError(k)
            out[k] = v
        return Attrs.of(out)
