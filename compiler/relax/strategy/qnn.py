"""Strategies of the integer convolution and matmul (relax.qnn.conv2d, relax.qnn.matmul): their
compute (legalize_ops/qnn.py) scheduled by the target's qnn schedule (topi.x86.qnn); a target
without one schedules them by their pattern."""
from __future__ import annotations

from .op_strategy import OpStrategy, compute_of, default_strategy, register_strategy


def _qnn(schedule: str):
    def strategy(call, target, schedules) -> OpStrategy:
        fn = getattr(schedules, schedule, None)
        if fn is None:
            return default_strategy(call, target, schedules)
        return OpStrategy(schedule, compute_of(call), fn)
    return strategy


STRATEGIES = {
    "relax.qnn.conv2d": _qnn("schedule_qnn_conv2d_nchw"),
    "relax.qnn.matmul": _qnn("schedule_qnn_matmul"),
}

for _name, _strategy in STRATEGIES.items():
    register_strategy(_name, _strategy)


__all__ = ["STRATEGIES"]
