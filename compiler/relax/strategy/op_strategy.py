"""An operator's strategy: what a target does with one call of it.

Each operator may carry the attribute "FStrategy" (`register_strategy`): a function
`(call, target, schedules) -> OpStrategy`, where `schedules` is the target's schedule module
(topi.x86 for a CPU, topi.cuda for a GPU). An `OpStrategy` gives the call's compute, the
schedule of a kernel anchored by it, and its tuning workload. An operator without one computes
with its "FLegalize" (legalize_ops) and is scheduled by its fusion pattern: the injective
schedule, the reduction schedule, else the generic one (on a GPU: the fused one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ... import topi
from ..expr import Call, Op
from ..op.pattern import COMM_REDUCE, INJECTIVE, op_pattern

STRATEGY_ATTR = "FStrategy"
COMPUTE_ATTR = "FLegalize"


@dataclass(frozen=True)
class OpStrategy:
    """`compute(call, args) -> te.Tensor | list` (args: the call's arguments as te tensors,
    Python scalars or tuples of them); `schedule(outs) -> Schedule` of a kernel this call
    anchors; `workload`: the tuning workload `(template name, *args)` of the call, or None
    when no tuning template takes it. `name` says which implementation was chosen."""
    name: str
    compute: Optional[Callable]
    schedule: Callable
    workload: Optional[tuple] = None


def register_strategy(op_name: str, strategy: Callable) -> None:
    """Sets `strategy(call, target, schedules) -> OpStrategy` as operator `op_name`'s."""
    Op.register_attr(op_name, STRATEGY_ATTR, strategy)


def schedules_for(target) -> object:
    """The schedule module of `target`: topi.cuda for a GPU kind, topi.x86 otherwise."""
    return topi.cuda if target is not None and not target.kind.is_host else topi.x86


def is_cpu(target) -> bool:
    """Whether `target` (None: a CPU) runs kernels on the host; only those have templates."""
    return target is None or target.kind.is_host


def compute_of(call: Call) -> Optional[Callable]:
    """The operator's own compute ("FLegalize"; None: it has no kernel)."""
    return call.op.get_attr(COMPUTE_ATTR) if isinstance(call.op, Op) else None


def default_strategy(call: Call, target, schedules) -> OpStrategy:
    """The operator's compute, scheduled by its fusion pattern."""
    pattern = op_pattern(call)
    if pattern <= INJECTIVE:
        return OpStrategy("injective", compute_of(call), schedules.schedule_injective)
    if pattern == COMM_REDUCE:
        return OpStrategy("reduce", compute_of(call), schedules.schedule_reduce)
    if schedules is topi.cuda:
        return OpStrategy("fused", compute_of(call), schedules.schedule_fused)
    return OpStrategy("generic", compute_of(call), topi.generic.default_schedule)


def strategy_of(call: Call, target=None) -> OpStrategy:
    """The strategy of operator call `call` for `target` (None: a CPU)."""
    schedules = schedules_for(target)
    strategy = call.op.get_attr(STRATEGY_ATTR) if isinstance(call.op, Op) else None
    return (strategy or default_strategy)(call, target, schedules)


__all__ = ["COMPUTE_ATTR", "STRATEGY_ATTR", "OpStrategy", "compute_of", "default_strategy",
           "is_cpu", "register_strategy", "schedules_for", "strategy_of"]
