"""The storage lowering gives a stage: the strides `storage_align` asks for, and the mark of a
double-buffered stage's writes."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..arith import simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.op import floormod
from ..tir.stmt import AttrStmt, ForKind, Stmt


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


def check_double_buffer(stage) -> None:
    """A double-buffered stage must be computed at a serial (or unrolled) loop: the halves
    alternate between that loop's iterations."""
    if not stage.double_buffered:
        return
    if stage.attach_type != "scope":
        where = "inlined" if stage.attach_type == "inline" else "computed at the root"
        raise ScheduleError(f"double_buffer on stage '{stage.name}': it is {where}; compute it "
                            "at a loop of its consumer (compute_at), whose iterations then "
                            "alternate between the two buffers")
    attr = stage.attach_stage.iter_attrs.get(stage.attach_ivar)
    kind = attr.kind if attr is not None else ForKind.SERIAL
    if kind not in (ForKind.SERIAL, ForKind.UNROLLED):
        raise ScheduleError(f"double_buffer on stage '{stage.name}': the loop "
                            f"'{stage.attach_ivar.name}' it is computed at is {kind}; its "
                            "iterations must run in order (a serial loop)")


def mark_double_buffer(stage, buffers, stmt: Stmt) -> Stmt:
    """`stmt` (the stage's loop nest) under the "double_buffer_scope" attr of each buffer it
    writes, when the stage is double-buffered (compiler/tir/transform/inject_double_buffer.py
    reads it)."""
    if not stage.double_buffered:
        return stmt
    for buf in buffers:
        stmt = AttrStmt(buf.data, "double_buffer_scope", E.const(1), stmt)
    return stmt
