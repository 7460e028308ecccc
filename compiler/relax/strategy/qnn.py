"""Strategies of the integer convolutions and matmul (relax.qnn.conv2d, conv2d_NCHWc, matmul):
their compute (legalize_ops/qnn.py) scheduled by the target's qnn schedule (topi.x86.qnn); a
target without one schedules them by their pattern. The blocked convolution (made by
qnn_layout_nchwc for a CPU only) takes topi.x86's blocked schedule on every CPU target, told
the target (which picks VNNI or the portable multiply-add): the generic schedule would run
it untiled and serial, tens of times slower."""
from __future__ import annotations

from ...topi.x86.qnn_conv2d_nchwc import schedule_qnn_conv2d_NCHWc
from .op_strategy import OpStrategy, compute_of, default_strategy, is_cpu, register_strategy


def _qnn(schedule: str):
    def strategy(call, target, schedules) -> OpStrategy:
        fn = getattr(schedules, schedule, None)
        if fn is None:
            return default_strategy(call, target, schedules)
        return OpStrategy(schedule, compute_of(call), fn)
    return strategy


def _conv2d_nchwc(call, target, schedules) -> OpStrategy:
    if not is_cpu(target):
        return default_strategy(call, target, schedules)
    return OpStrategy("qnn_conv2d_NCHWc", compute_of(call),
                      lambda outs: schedule_qnn_conv2d_NCHWc(outs, target))


STRATEGIES = {
    "relax.qnn.conv2d": _qnn("schedule_qnn_conv2d_nchw"),
    "relax.qnn.conv2d_NCHWc": _conv2d_nchwc,
    "relax.qnn.matmul": _qnn("schedule_qnn_matmul"),
}

for _name, _strategy in STRATEGIES.items():
    register_strategy(_name, _strategy)


__all__ = ["STRATEGIES"]
