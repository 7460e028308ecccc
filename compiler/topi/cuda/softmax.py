"""softmax / log_softmax for GPUs (TVM's topi.cuda.schedule_softmax): the max and the sum of
exponentials each a reduction kernel (schedule_reduce_stage: across a block's threads for long
rows, a thread per row otherwise), the exponentials recomputed where they are read, the
normalised output (and what follows it) flat over blocks and threads."""
from __future__ import annotations

from ... import te
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, find_anchor
from ..x86.injective import inline_injective_producers
from .common import bind_flat
from .reduction import schedule_reduce_stage


def schedule_softmax(outs):
    outs = as_outputs(outs)
    s = te.create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    sm = find_anchor(outs, lambda t: t in ("softmax_output", "log_softmax_output"))
    for o in outs:
        inline_injective_producers(s, o.op, outputs - {id(sm)} if sm is not None else outputs)
    if sm is None:
        for o in outs:
            bind_flat(s, o)
        return s
    parts, todo, seen = [], [t.op for t in sm.input_tensors], set()
    while todo:   # the reductions sm reads, directly or through the exponentials
        op = todo.pop(0)
        if id(op) in seen or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        if not tag.is_injective(op.tag):
            parts.append(op)
        todo.extend(t.op for t in op.input_tensors)
    for t in sm.input_tensors:
        if isinstance(t.op, ComputeOp) and tag.is_injective(t.op.tag):
            s[t.op].compute_inline()   # the exponentials
            inline_injective_producers(s, t.op, outputs)
    for p in parts:
        inline_injective_producers(s, p, outputs)
        for t in p.input_tensors:
            if isinstance(t.op, ComputeOp) and tag.is_injective(t.op.tag) and \
                    id(t.op) not in outputs and s[t.op].attach_type != "inline":
                s[t.op].compute_inline()
        schedule_reduce_stage(s, p, p)
    if id(sm) not in outputs:
        bind_flat(s, sm.output(0))
    for o in outs:
        bind_flat(s, o)
    return s
