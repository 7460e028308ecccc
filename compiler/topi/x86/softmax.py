"""softmax / log_softmax for x86: parallel over the axes before the softmax axis, the max and
sum reductions (and the exponentials) computed per outer row, inside that loop. Over the
innermost axis the row is vectorized: the reductions in vector lanes (normalization's
`vector_reduce`), the exponentials and the output in vectors."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, find_anchor
from .injective import inline_injective_producers, schedule_injective_from_existing
from .normalization import vector_reduce, vectorize_innermost


def schedule_softmax(outs):
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    sm = find_anchor(outs, lambda t: t in ("softmax_output", "log_softmax_output"))
    for o in outs:
        inline_injective_producers(s, o.op, outputs - {id(sm)} if sm is not None else outputs)
    if sm is None:
        return s
    exp = [t.op for t in sm.input_tensors if t.op.name == "T_softmax_exp"]
    parts = [t.op for op in [sm] + exp for t in op.input_tensors
             if isinstance(t.op, ComputeOp) and not tag.is_injective(t.op.tag)
             and t.op.name != "T_softmax_exp"]
    parts = list({id(p): p for p in parts}.values())
    for p in parts + exp:
        inline_injective_producers(s, p, outputs)
    axis = int(sm.attrs.get("axis", len(sm.axis) - 1))
    if sm.output(0) in outs or id(sm) in outputs:
        stage = s[sm]
        before = list(stage.op.axis[:axis])
        if before:
            outer = stage.fuse(*before) if len(before) > 1 else before[0]
            stage.parallel(outer)
            innermost = axis == len(sm.axis) - 1
            for p in parts:
                if innermost and len(p.reduce_axis) == 1:
                    vector_reduce(s, p.output(0), stage, outer)
                else:
                    s[p].compute_at(stage, outer)
            for p in exp:
                s[p].compute_at(stage, outer)
                if innermost:
                    vectorize_innermost(s[p])
            if innermost and len(stage.op.axis) == len(before) + 1:
                vectorize_innermost(stage)
        for o in outs:
            if o.op is not sm:
                schedule_injective_from_existing(s, o)
        return s
    # softmax followed by injective outputs: softmax at the root, outputs as injective
    for o in outs:
        schedule_injective_from_existing(s, o)
    return s
