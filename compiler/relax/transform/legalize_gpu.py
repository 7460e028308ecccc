"""The kernels of a GPU build (used by legalize): a fused group's tensor expressions
scheduled by the GPU schedule of its anchor operator (topi.cuda) under the target;
when that schedule needs static extents and the group's shapes are symbolic, a GPU fallback
(one thread per output element, the reduction serial in a register). A kernel that leaves a
store on no GPU thread (a 0-d result) is scheduled for the CPU instead and gets attr
HOST_FALLBACK ("kiln.host_fallback"): the executors run it on the host.
"""
from __future__ import annotations

from typing import List

from ... import te, topi
from ...ir.errors import CompilerError, IRError
from ...lower import lower
from ...target import Target
from ...te.tensor import ComputeOp
from ...tir.functor import IRVisitor
from ...tir.stmt import ForKind
from ...topi import tag
from ...topi.cuda.common import bind_flat, schedule_anchored, thread_per_output
from .. import expr as X
from ..strategy import anchor_of, schedule_of

# attr of a kernel of a GPU build that runs on the host CPU instead (see `runs_on_threads`)
HOST_FALLBACK = "kiln.host_fallback"


def runs_on_threads(func) -> bool:
    """Whether every store of `func` is inside a loop bound to a GPU launch axis."""
    outside = []

    class V(IRVisitor):
        depth = 0

        def visit_For(self, loop):
            bound = loop.kind == ForKind.THREAD_BINDING
            V.depth += bound
            self.generic_visit(loop)
            V.depth -= bound

        def visit_BufferStore(self, st):
            if V.depth == 0:
                outside.append(st)

    V().visit(func.body)
    return not outside


def anchored_fallback_schedule(outs):
    """The group around its anchor (its first non-injective stage): producers and epilogue
    inlined, one thread per output element computing the anchor's value in a register (its
    reduction serial)."""
    return schedule_anchored(list(outs), lambda t: not tag.is_injective(t), thread_per_output)


def flat_fallback_schedule(outs):
    """Every injective stage that is not an output inlined; each other stage one thread per
    element, bound flat to blocks and threads."""
    outs = list(outs)
    s = te.create_schedule([o.op for o in outs])
    out_ops = {id(o.op) for o in outs}
    for stage in list(s.stages):
        op = stage.op
        if isinstance(op, ComputeOp) and id(op) not in out_ops and not op.reduce_axis:
            s[op].compute_inline()
    for stage in list(s.stages):
        op = stage.op
        if isinstance(op, ComputeOp) and stage.attach_type == "root":
            bind_flat(s, op.output(0))
    return s


_ERRORS = (IRError, CompilerError, TypeError, ValueError)


def _first_lowered(schedules, inputs, outs, name: str):
    """The kernel of the first of `schedules` that schedules and lowers; the last one's error
    otherwise."""
    for k, make in enumerate(schedules):
        try:
            return lower(make(outs), inputs + outs, name=name)[name]
        except _ERRORS:
            if k == len(schedules) - 1:
                raise
    raise AssertionError("no schedule")


def lower_gpu_kernel(calls: List[X.Call], inputs, outs, name: str, target: Target,
                     symbolic: bool):
    """The lowered PrimFunc `name` computing `outs` from `inputs` (the group's operator calls
    `calls`) for the GPU `target`; see the module docstring."""
    tuned = schedule_of(anchor_of(calls), target)
    fallbacks = [anchored_fallback_schedule, flat_fallback_schedule] if symbolic else []
    with target:
        func = _first_lowered([tuned] + fallbacks, inputs, outs, name)
    if runs_on_threads(func):
        return func
    # nothing to spread over GPU threads (a 0-d result): the kernel runs on the host
    host = [schedule_of(anchor_of(calls))] + ([topi.generic.default_schedule] if symbolic else [])
    return _first_lowered(host, inputs, outs, name).with_attr(HOST_FALLBACK, True)


__all__ = ["HOST_FALLBACK", "anchored_fallback_schedule", "flat_fallback_schedule",
           "lower_gpu_kernel", "runs_on_threads"]
