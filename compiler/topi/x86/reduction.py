"""Reductions for x86: each reduction stage at the root with its data axes fused and in
parallel; injective stages before it inlined, injective outputs after it laid out as
injective."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs
from .injective import schedule_injective_from_existing


def schedule_reduce_stage(s, op):
    """The reduction `op` at the root: its data axes fused, in parallel."""
    stage = s[op]
    if stage.op.axis:
        axes = list(stage.op.axis)
        stage.parallel(stage.fuse(*axes) if len(axes) > 1 else axes[0])


def schedule_reduce(outs):
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    seen = set()

    def visit(op):
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        if tag.is_injective(op.tag):
            if id(op) in outputs:
                schedule_injective_from_existing(s, op.output(0))
            else:
                s[op].compute_inline()
        elif op.reduce_axis:
            schedule_reduce_stage(s, op)
        for t in op.input_tensors:
            visit(t.op)

    for o in outs:
        visit(o.op)
    return s


schedule_lrn = schedule_reduce
