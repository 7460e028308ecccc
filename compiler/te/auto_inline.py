"""Inline every stage of a kind at once, as TVM's `te.schedule.AutoInline*`: a stage is inlined
when it is a te.compute without reduction, not an output, and not scheduled yet (no split,
fuse, reorder or attachment), and

- `auto_inline_elemwise`: every tensor it reads is read at exactly its own axes (`B[i, j] =
  f(A[i, j])`);
- `auto_inline_broadcast`: its tag is "broadcast";
- `auto_inline_injective`: always (any index map without reduction).
"""
from __future__ import annotations

from ..tir.functor import post_order_visit
from .stage import Stage
from .tensor import ComputeOp, TensorLoad


def _unscheduled(st: Stage) -> bool:
    return not st.relations and st.attach_type == "root" \
        and st.leaf_iter_vars == st.all_iter_vars


def _candidate(st: Stage) -> bool:
    return isinstance(st.op, ComputeOp) and not st.op.reduce_axis and not st.is_output \
        and _unscheduled(st)


def _elemwise(op: ComputeOp) -> bool:
    axes = [iv.var for iv in op.axis]
    ok = [True]

    def visit(n):
        if isinstance(n, TensorLoad) and (len(n.indices) != len(axes) or
                                          any(i is not v for i, v in zip(n.indices, axes))):
            ok[0] = False

    for b in op.body:
        post_order_visit(b, visit)
    return ok[0]


def _inline_where(sch, pred) -> None:
    for st in sch.stages:
        if _candidate(st) and pred(st.op):
            st.compute_inline()


def auto_inline_elemwise(sch) -> None:
    """Inline the unscheduled element-wise stages of `sch`."""
    _inline_where(sch, _elemwise)


def auto_inline_broadcast(sch) -> None:
    """Inline the unscheduled stages tagged "broadcast" of `sch`."""
    _inline_where(sch, lambda op: op.tag == "broadcast")


def auto_inline_injective(sch) -> None:
    """Inline every unscheduled stage of `sch` that has no reduction."""
    _inline_where(sch, lambda op: True)
