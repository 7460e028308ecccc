"""The kernels of a GPU build of the VM (used by legalize_vm): a fused group's tensor
expressions scheduled by the GPU schedule of its anchor operator (topi.cuda) under the target;
when that schedule needs static extents and the group's shapes are symbolic, the GPU fallback
(injective stages inlined, each output one thread per element, its reduction serial in the
thread). A kernel that leaves a store on no GPU thread (a 0-d result) is scheduled for the CPU
instead and gets attr HOST_FALLBACK: it runs on the host, as in `legalize`.
"""
from __future__ import annotations

from typing import List

from ... import te, topi
from ...ir.errors import CompilerError, IRError
from ...lower import lower
from ...target import Target
from ...te.tensor import ComputeOp
from ...topi.cuda.common import bind_flat
from .. import expr as X
from .legalize import HOST_FALLBACK, _anchor, _runs_on_threads, _schedule_of


def gpu_fallback_schedule(outs):
    """Every injective stage that is not an output inlined; each other stage (outputs, and
    the reductions they read) one thread per output element, bound flat to blocks and
    threads."""
    outs = list(outs)
    s = te.create_schedule([o.op for o in outs])
    out_ops = {id(o.op) for o in outs}
    for stage in list(s.stages):
        op = stage.op
        if not isinstance(op, ComputeOp) or id(op) in out_ops:
            continue
        if op.reduce_axis:
            continue
        s[op].compute_inline()
    for stage in list(s.stages):
        op = stage.op
        if isinstance(op, ComputeOp) and stage.attach_type == "root":
            bind_flat(s, op.output(0))
    return s


def lower_gpu_kernel(calls: List[X.Call], inputs, outs, name: str, target: Target,
                     symbolic: bool):
    """The lowered PrimFunc `name` computing `outs` from `inputs` (the group's operator calls
    `calls`) for the GPU `target`; see the module docstring."""
    with target:
        try:
            sch = _schedule_of(_anchor(calls), target)(outs)
            func = lower(sch, inputs + outs, name=name)[name]
        except (IRError, CompilerError, TypeError, ValueError):
            if not symbolic:
                raise
            func = lower(gpu_fallback_schedule(outs), inputs + outs, name=name)[name]
    if _runs_on_threads(func):
        return func
    # nothing to spread over GPU threads (a 0-d result): the kernel runs on the host
    try:
        sch = _schedule_of(_anchor(calls))(outs)
        func = lower(sch, inputs + outs, name=name)[name]
    except (IRError, CompilerError, TypeError, ValueError):
        if not symbolic:
            raise
        func = lower(topi.generic.default_schedule(outs), inputs + outs, name=name)[name]
    return func.with_attr(HOST_FALLBACK, True)


__all__ = ["gpu_fallback_schedule", "lower_gpu_kernel"]
