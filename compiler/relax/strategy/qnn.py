"""Strategies of the integer convolutions and matmul (relax.qnn.conv2d, conv2d_NCHWc, matmul):
their compute (legalize_ops/qnn.py) scheduled by the target's qnn schedule (topi.x86.qnn; the
blocked convolution's is told the target, which picks VNNI or the portable multiply-add); a
target without one schedules them by their pattern."""
from __future__ import annotations

from .op_strategy import OpStrategy, compute_of, default_strategy, register_strategy


def _qnn(schedule: str):
    def strategy(call, target, schedules) -> OpStrategy:
        fn = getattr(schedules, schedule, None)
        if fn is None:
            return default_strategy(call, target, schedules)
        return OpStrategy(schedule, compute_of(call), fn)
    return strategy


def _conv2d_nchwc(call, target, schedules) -> OpStrategy:
    fn = getattr(schedules, "schedule_qnn_conv2d_NCHWc", None)
    if fn is None:
        return default_strategy(call, target, schedules)
    return OpStrategy("qnn_conv2d_NCHWc", compute_of(call), lambda outs: fn(outs, target))


STRATEGIES = {
    "relax.qnn.conv2d": _qnn("schedule_qnn_conv2d_nchw"),
    "relax.qnn.conv2d_NCHWc": _conv2d_nchwc,
    "relax.qnn.matmul": _qnn("schedule_qnn_matmul"),
}

for _name, _strategy in STRATEGIES.items():
    register_strategy(_name, _strategy)


__all__ = ["STRATEGIES"]
