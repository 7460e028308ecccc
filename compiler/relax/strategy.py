"""How a kernel is scheduled: its anchor operator, and the schedule the anchor's strategy gives
for a target.

A fused kernel is scheduled by its anchor (the operator call with the strongest fusion pattern,
the first among equals). For the anchor, in order:
1. a tuned schedule, when a tuning context occupies the seat (`TuningSeat`; compiler.autotvm's
   dispatch contexts do while entered) and has a config for the anchor's workload;
2. the schedule the operator names (`SCHEDULES`: a function of the target's schedule module,
   topi.x86 for a CPU, topi.cuda for a GPU), with the conv2d / matmul / layer_norm variants
   decided by the call's attributes and shapes;
3. by fusion pattern: the injective schedule, the reduction schedule, else the generic one.
"""
from __future__ import annotations

import threading
from typing import Callable, Dict, List, Optional, Sequence

from .. import topi
from ..target import Target
from . import expr as X
from .op.pattern import COMM_REDUCE, INJECTIVE, op_pattern

# The schedule of a kernel, by its anchor operator (the others are fused around it): the name
# of the schedule in the target's schedule module (topi.x86 or topi.cuda).
SCHEDULES: Dict[str, str] = {
    "relax.nn.conv2d": "schedule_conv2d_nchw",
    "relax.nn.conv2d_transpose": "schedule_conv2d_transpose_nchw",
    "relax.nn.contrib_conv2d_winograd_without_weight_transform":
        "schedule_conv2d_winograd_NCHWc",
    "relax.nn.dense": "schedule_dense",
    "relax.matmul": "schedule_matmul",     # 2-d; batched forms in `schedule_of`
    "relax.nn.max_pool2d": "schedule_pool",
    "relax.nn.avg_pool2d": "schedule_pool",
    "relax.nn.adaptive_avg_pool2d": "schedule_adaptive_pool",
    "relax.nn.adaptive_max_pool2d": "schedule_adaptive_pool",
    "relax.nn.conv3d": "schedule_conv3d_ncdhw",
    "relax.nn.max_pool3d": "schedule_pool",
    "relax.nn.avg_pool3d": "schedule_pool",
    "relax.nn.adaptive_avg_pool3d": "schedule_adaptive_pool",
    "relax.nn.adaptive_max_pool3d": "schedule_adaptive_pool",
    "relax.nn.softmax": "schedule_softmax",
    "relax.nn.log_softmax": "schedule_softmax",
}


class TuningSeat:
    """The tuning context in force in this thread (None: none). A context object occupies the
    seat while entered; the kernel maker asks it `tuned_schedule(anchor, target)` (a schedule
    function, or None to take the library's default) and lowers kernels in this process
    while the seat is occupied (the context records what it applied)."""

    _local = threading.local()

    @classmethod
    def _stack(cls) -> List[object]:
        if not hasattr(cls._local, "stack"):
            cls._local.stack = []
        return cls._local.stack

    @classmethod
    def current(cls):
        stack = cls._stack()
        return stack[-1] if stack else None

    @classmethod
    def occupy(cls, ctx) -> None:
        cls._stack().append(ctx)

    @classmethod
    def vacate(cls, ctx) -> None:
        cls._stack().remove(ctx)


def schedules_for(target: Optional[Target]):
    """The schedule module of `target`: topi.cuda for a GPU kind, topi.x86 otherwise."""
    return topi.cuda if target is not None and not target.kind.is_host else topi.x86


def anchor_of(calls: Sequence[X.Call]) -> X.Call:
    """The operator call that decides a kernel's schedule: the strongest fusion pattern, the
    first among equals."""
    best = calls[0]
    for c in calls[1:]:
        if op_pattern(c) > op_pattern(best):
            best = c
    return best


def schedule_of(anchor: X.Call, target: Optional[Target] = None) -> Callable:
    """The schedule function (outs -> Schedule) of a kernel anchored by `anchor` for `target`
    (None: a CPU); see the module docstring for the order."""
    seat = TuningSeat.current()
    tuned = seat.tuned_schedule(anchor, target) if seat is not None else None
    if tuned is not None:
        return tuned
    sched = schedules_for(target)
    name = anchor.op.name
    if name == "relax.nn.conv2d" and anchor.attrs.data_layout != "NCHW":
        return sched.schedule_conv2d_NCHWc    # blocked layouts: CPU targets only
    if name == "relax.nn.conv2d" and anchor.attrs.groups != 1:
        return sched.schedule_group_conv2d_nchw
    if name == "relax.matmul" and any(a.struct_info.ndim != 2 for a in anchor.args):
        return sched.schedule_batch_matmul
    if name == "relax.nn.layer_norm" and sched is topi.x86:
        return sched.schedule_layer_norm
    if name in SCHEDULES:
        return getattr(sched, SCHEDULES[name])
    pattern = op_pattern(anchor)
    if pattern <= INJECTIVE:
        return sched.schedule_injective
    if pattern == COMM_REDUCE:
        return sched.schedule_reduce
    if sched is topi.cuda:
        return sched.schedule_fused
    return topi.generic.default_schedule


__all__ = ["SCHEDULES", "TuningSeat", "anchor_of", "schedule_of", "schedules_for"]
