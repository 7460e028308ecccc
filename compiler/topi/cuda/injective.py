"""Injective schedules for GPUs (TVM's topi.cuda.schedule_injective): intermediates inlined,
each output's axes fused, split by the thread budget and bound to blockIdx.x / threadIdx.x."""
from __future__ import annotations

from ... import te
from ..utils import as_outputs
from ..x86.injective import inline_injective_producers
from .common import bind_flat, schedule_injective_from_existing  # noqa: F401


def schedule_injective(outs):
    outs = as_outputs(outs)
    s = te.create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    for o in outs:
        inline_injective_producers(s, o.op, outputs)
        bind_flat(s, o)
    return s


schedule_elemwise = schedule_injective
schedule_broadcast = schedule_injective
