"""Layout of the storage lowering gives a stage: the strides `storage_align` asks for."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..arith import simplify
from ..tir import expr as E
from ..tir.op import floormod


def aligned_strides(shape: Sequence[E.PrimExpr],
                    aligns: Sequence[Tuple[int, int, int]]) -> List[E.PrimExpr]:
    """Row-major strides of `shape` where dimension d of each `(d, factor, offset)` in `aligns`
    has its stride padded up to the next value with `stride % factor == offset` (the dimensions
    outside it grow with it), as TVM's storage_align."""
    align = {d: (f, o) for d, f, o in aligns}
    strides: List[E.PrimExpr] = [E.const(1)] * len(shape)
    stride: E.PrimExpr = E.const(1)
    for d in reversed(range(len(shape))):
        if d in align:
            factor, offset = align[d]
            stride = simplify(stride + floormod(factor + offset - floormod(stride, factor),
                                                factor))
        strides[d] = stride
        stride = simplify(stride * shape[d])
    return strides
