"""The x86 schedule of a kernel anchored by a separable bilinear resize2d (topi.image.resize2d
with `separable`): the output's (n, c) planes in parallel, each plane's width-interpolated
input rows (the ROWS_TAG stage) computed at the start of its plane, then the output rows blended
from them with the width vectorized. Anything else the kernel holds is injective and inlined; a
kernel whose output is not the resize's [n, c, out_h, out_w] (a layout transform after it,
several outputs) inlines the rows stage too and takes the injective schedule."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp
from ..image.resize import ROWS_TAG
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .injective import VECTOR_LANES, inline_injective_producers, schedule_injective_from_existing


def rows_stages(outs):
    """The ROWS_TAG compute ops the outputs read, directly or through other ops."""
    found, seen, todo = [], set(), [o.op for o in outs]
    while todo:
        op = todo.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if isinstance(op, ComputeOp) and op.tag == ROWS_TAG:
            found.append(op)
        todo.extend(t.op for t in op.input_tensors)
    return found


def schedule_resize2d(outs):
    """Schedule a kernel anchored by resize2d (see the module docstring)."""
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    rows = rows_stages(outs)
    for op in [o.op for o in outs] + rows:
        inline_injective_producers(s, op, outputs)
    out = outs[0]
    shape = get_const_tuple(out.shape)
    if len(outs) == 1 and len(rows) == 1 and len(shape) == 4 and all(
            isinstance(d, int) for d in shape):
        r_shape = get_const_tuple(rows[0].output(0).shape)
        if r_shape[:2] == shape[:2] and r_shape[3] == shape[3]:
            stage = s[out]
            b, c, _, x = stage.op.axis
            planes = stage.fuse(b, c)
            stage.parallel(planes)
            lanes = divisor_at_most(shape[3], VECTOR_LANES)
            if lanes >= 2:
                _, inner = stage.split(x, factor=lanes)
                stage.vectorize(inner)
            s[rows[0]].compute_at(stage, planes)
            return s
    for op in rows:
        s[op].compute_inline()
    for o in outs:
        schedule_injective_from_existing(s, o)
    return s
