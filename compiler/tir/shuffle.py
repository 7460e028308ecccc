"""`Shuffle`: lanes picked from the concatenation of vectors (a scalar counts as one lane), as
`tvm.tir.Shuffle`; `Shuffle([x, y], [0, 1])` makes the 2-lane vector (x, y)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Tuple

from ..ir.dtype import DType
from ..ir.errors import IRError
from . import expr as E


@dataclass(frozen=True, eq=False, slots=True)
class Shuffle(E.PrimExpr):
    """Lane `i` of the result is lane `indices[i]` of `vectors` laid end to end; every index is
    a constant within that concatenation and the vectors share one element type."""

    vectors: Tuple[E.PrimExpr, ...]
    indices: Tuple[E.PrimExpr, ...]
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        vectors = tuple(E.convert(v) for v in self.vectors)
        indices = tuple(E.convert(i) for i in self.indices)
        if not vectors or not indices:
            raise IRError("Shuffle needs at least one vector and one index")
        elem = vectors[0].dtype.element_of()
        if any(v.dtype.element_of() != elem for v in vectors):
            raise IRError(f"Shuffle: the vectors have different element types "
                          f"({', '.join(str(v.dtype) for v in vectors)})")
        total = sum(v.dtype.lanes for v in vectors)
        for i in indices:
            if not isinstance(i, E.IntImm) or not 0 <= i.value < total:
                raise IRError(f"Shuffle: index {i} is not a constant lane in [0, {total})")
        object.__setattr__(self, "vectors", vectors)
        object.__setattr__(self, "indices", indices)
        if self.dtype is None:
            object.__setattr__(self, "dtype", elem.with_lanes(len(indices)))

    def lane_source(self, i: int) -> Tuple[E.PrimExpr, int]:
        """(the vector, its lane) that result lane `i` comes from."""
        k = self.indices[i].value
        for v in self.vectors:
            if k < v.dtype.lanes:
                return v, k
            k -= v.dtype.lanes
        raise IRError(f"Shuffle lane {i} is out of range")


def concat(*vectors) -> Shuffle:
    """The vectors (or scalars) laid end to end, as TVM's `Shuffle.concat`."""
    total = sum(E.convert(v).dtype.lanes for v in vectors)
    return Shuffle(vectors, [E.const(i, "int32") for i in range(total)])
