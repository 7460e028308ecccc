"""softmax / log_softmax for GPUs (TVM's topi.cuda.schedule_softmax, its thread-per-row form):
one kernel, a thread per row (every axis but the softmax axis, fused, over blocks and
threads); the thread finds the row's max and sum of exponentials in registers, then writes the
row. No intermediate leaves the registers, so the kernel needs no device workspace. Outputs
after the softmax (elementwise) are laid out flat."""
from __future__ import annotations

from ... import te
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, find_anchor
from ..x86.injective import inline_injective_producers
from .common import bind_flat, const_axes_size, max_threads, thread


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
        elif id(op) not in outputs:
            s[op].compute_inline()
        todo.extend(t.op for t in op.input_tensors)
    axis = int(sm.attrs.get("axis", len(sm.axis) - 1))
    st = s[sm]
    rows = [iv for k, iv in enumerate(st.op.axis) if k != axis]
    st.reorder(*rows, st.op.axis[axis])
    if rows:
        fused = st.fuse(*rows) if len(rows) > 1 else rows[0]
        n = max(1, min(max_threads(), const_axes_size(rows)))
        bx, tx = st.split(fused, factor=n)
        st.bind(bx, thread("blockIdx.x"))
        st.bind(tx, thread("threadIdx.x"))
        for p in parts:
            s[p].set_scope("local")
            s[p].compute_at(st, tx)
    else:   # a 1-d softmax: one thread
        outer, _ = st.split(st.op.axis[axis], nparts=1)
        st.bind(outer, thread("blockIdx.x"))
        for p in parts:
            s[p].set_scope("local")
            s[p].compute_at(st, outer)
    for o in outs:
        if o.op is not sm:
            bind_flat(s, o)
    return s
