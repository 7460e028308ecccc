"""How a kernel is computed and scheduled: its anchor operator, and the strategy the anchor's
operator gives for a target (op_strategy.py; the operators with schedules of their own: nn.py).

A fused kernel is scheduled by its anchor (the operator call with the strongest fusion pattern;
among equals, the first with a strategy of its own, else the first). For the anchor, in order:
1. a tuned schedule, when a tuning context occupies the seat (`TuningSeat`; compiler.autotvm's
   dispatch contexts do while entered) and has a config for the anchor's workload;
2. the schedule of the anchor's strategy for the target.
"""
from __future__ import annotations

import threading
from typing import Callable, List, Optional, Sequence

from ..expr import Call, Op
from ..op.pattern import op_pattern
from . import nn, qnn  # noqa: F401  (register the operators' strategies)
from .op_strategy import (
    COMPUTE_ATTR,
    STRATEGY_ATTR,
    OpStrategy,
    compute_of,
    register_strategy,
    schedules_for,
    strategy_of,
)


class TuningSeat:
    """The tuning context in force in this thread (None: none). A context object occupies the
    seat while entered; the kernel maker asks it `tuned_schedule(anchor, target)` (a schedule
    function, or None to take the strategy's) and lowers kernels in this process while the
    seat is occupied (the context records what it applied)."""

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


def anchor_of(calls: Sequence[Call]) -> Call:
    """The operator call that decides a kernel's schedule: the strongest fusion pattern; among
    equals, the first whose operator has a strategy of its own (a resize2d after a
    layout_transform, both injective), else the first."""
    def rank(c):
        own = isinstance(c.op, Op) and c.op.get_attr(STRATEGY_ATTR) is not None
        return op_pattern(c), own

    best = calls[0]
    for c in calls[1:]:
        if rank(c) > rank(best):
            best = c
    return best


def schedule_of(anchor: Call, target=None) -> Callable:
    """The schedule function (outs -> Schedule) of a kernel anchored by `anchor` for `target`
    (None: a CPU); see the module docstring for the order."""
    seat = TuningSeat.current()
    tuned = seat.tuned_schedule(anchor, target) if seat is not None else None
    if tuned is not None:
        return tuned
    return strategy_of(anchor, target).schedule


def workload_of(call: Call, target=None) -> Optional[tuple]:
    """The tuning workload `(template name, *args)` of operator call `call` for `target`
    (None: a CPU), or None when no template takes it."""
    return strategy_of(call, target).workload


__all__ = ["COMPUTE_ATTR", "STRATEGY_ATTR", "OpStrategy", "TuningSeat", "anchor_of",
           "compute_of", "register_strategy", "schedule_of", "schedules_for", "strategy_of",
           "workload_of"]
