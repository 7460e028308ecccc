"""Expressions of each stage after compute_inline, and the translation of tensor reads to
buffer loads."""
from __future__ import annotations

from typing import Callable, Dict

from ..tir import expr as E
from ..tir.functor import IRMutator, substitute
from .hybrid_op import HybridOp
from .scan import ScanOp
from .stage import Stage
from .tensor import ExternOp, TensorLoad


class _Inliner(IRMutator):
    def __init__(self, sch, bodies: Dict[Stage, tuple]):
        self.sch, self.bodies = sch, bodies

    def visit_TensorLoad(self, e: TensorLoad):
        e = self.generic_visit(e)
        producer = self.sch.stage_map.get(e.tensor.op)
        if producer is None or producer.attach_type != "inline":
            return e
        body = self.bodies[producer][e.tensor.value_index]
        return substitute(body, {iv.var: i for iv, i in zip(producer.op.axis, e.indices)})


def inline_bodies(sch) -> Dict[Stage, tuple]:
    """For every compute stage (inlined ones included), its bodies with inlined producers
    substituted; () for an extern or hybrid stage. Stage order puts producers first, so one pass
    suffices."""
    bodies: Dict[Stage, tuple] = {}
    for st in sch.stages:
        if st.is_placeholder:
            continue
        if isinstance(st.op, (ExternOp, HybridOp)):
            bodies[st] = ()  # a statement read whole (hybrid_op.py): no tensor reads to inline
            continue
        if isinstance(st.op, ScanOp):
            bodies[st] = st.op.scan_reads()  # one step of the time loop reads its updates
            continue
        bodies[st] = tuple(_Inliner(sch, bodies).visit(b) for b in st.op.body)
    return bodies


class _ToBufferLoad(IRMutator):
    def __init__(self, resolve: Callable):
        self.resolve = resolve

    def visit_TensorLoad(self, e: TensorLoad):
        e = self.generic_visit(e)
        buf, offsets = self.resolve(e.tensor)
        idx = tuple(i if E.is_const_int(o, 0) else i - o for i, o in zip(e.indices, offsets))
        return E.BufferLoad(buf, idx)


def to_buffer_loads(expr, resolve: Callable):
    """`expr` with each TensorLoad replaced by a BufferLoad; `resolve(tensor)` gives the
    buffer and the per-dimension offsets (the region's min) of its storage."""
    return _ToBufferLoad(resolve).visit(expr)
