"""Strategies of the integer convolutions and matmul (relax.qnn.conv2d, conv2d_NCHWc, matmul):
their compute (legalize_ops/qnn.py) scheduled by the target's qnn schedule (topi.x86.qnn); a
target without one schedules them by their pattern. The blocked convolution (made by
qnn_layout_nchwc for a CPU only) takes topi.x86's blocked schedule on every CPU target, told
the target (which picks VNNI or the portable multiply-add): the generic schedule would run
it untiled and serial, tens of times slower; so do the packed integer matmul
(topi.x86.qnn_matmul_int8) and the blocked depthwise convolution
(topi.x86.qnn_depthwise_conv2d_nchwc). On a Cortex-M target an NCHW integer convolution
of groups 1 over int8/uint8 computes over 16-bit pairs (topi.arm_cpu.qnn_conv2d), by
VMLADAVA.S16 (eight 16-bit lanes) where the target has MVE (topi.arm_cpu.has_mve: the c target
for the Cortex-M55 or M85), else by SMLAD where it has the DSP extension
(topi.arm_cpu.has_dsp), and a grouped (depthwise) one
takes topi.arm_cpu's direct schedule; other targets take the portable kernels. On
every Cortex-M target requantize computes in single precision where that decides the result,
and quantize and requantize round with the FPU (topi.arm_cpu.qnn_requantize: the same values
as the portable formulas, without the double arithmetic an M4F or M7 runs in software, nor a
library call per value)."""
from __future__ import annotations

from ... import te
from ...topi import arm_cpu
from ...topi.x86.qnn_conv2d_nchwc import schedule_qnn_conv2d_NCHWc
from ...topi.x86.qnn_depthwise_conv2d_nchwc import schedule_qnn_depthwise_conv2d_NCHWc
from ...topi.x86.qnn_matmul_int8 import schedule_qnn_matmul_int8
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


def _matmul_packed(call, target, schedules) -> OpStrategy:
    if not is_cpu(target):
        return default_strategy(call, target, schedules)
    return OpStrategy("qnn_matmul_int8", compute_of(call),
                      lambda outs: schedule_qnn_matmul_int8(outs, target))


def _depthwise_nchwc(call, target, schedules) -> OpStrategy:
    if not is_cpu(target):
        return default_strategy(call, target, schedules)
    return OpStrategy("qnn_depthwise_conv2d_NCHWc", compute_of(call),
                      schedule_qnn_depthwise_conv2d_NCHWc)


def _smlad_conv2d(call) -> bool:
    """Whether the convolution over 16-bit pairs takes `call` (relax.qnn.conv2d): groups 1,
    int8/uint8 data and weight of static 4-d shapes."""
    if call.attrs.groups != 1:
        return False
    for arg in call.args[:2]:
        si = arg.struct_info
        if getattr(si, "dtype", None) not in ("int8", "uint8") or getattr(si, "ndim", 0) != 4 \
                or not getattr(si, "is_static", False):
            return False
    return True


def _conv2d(call, target, schedules) -> OpStrategy:
    if target is not None and arm_cpu.is_cortex_m(target) and _smlad_conv2d(call):
        # MVE's steps are four words: the columns padded with zero words to a multiple of 4
        multiple = arm_cpu.mve.WORDS if arm_cpu.has_mve(target) else 1

        def compute(call, a):
            at = call.attrs
            return arm_cpu.qnn_conv2d_nchw_smlad(a[0], a[1], a[2], a[3], list(at.strides),
                                                 list(at.padding), list(at.dilation), multiple)
        return OpStrategy("qnn_conv2d_nchw_smlad", compute,
                          lambda outs: arm_cpu.schedule_qnn_conv2d_nchw_smlad(outs, target))
    if target is not None and arm_cpu.is_cortex_m(target) and call.attrs.groups > 1:
        return OpStrategy("qnn_group_conv2d_nchw_cortex_m", compute_of(call),
                          arm_cpu.schedule_qnn_group_conv2d_nchw)
    return _qnn("schedule_qnn_conv2d_nchw")(call, target, schedules)


def _requantize(call, target, schedules) -> OpStrategy:
    base = default_strategy(call, target, schedules)
    if target is None or not arm_cpu.is_cortex_m(target):
        return base

    def compute(call, a):
        at = call.attrs
        dtype = str(a[1].dtype if isinstance(a[1], te.Tensor) else
                    call.args[1].struct_info.dtype)   # the multiplier's float type
        return arm_cpu.requantize_cortex_m(a[0], a[1], a[2], at.axis, at.out_dtype, dtype)
    return OpStrategy("requantize_cortex_m", compute, base.schedule)


def _quantize(call, target, schedules) -> OpStrategy:
    base = default_strategy(call, target, schedules)
    if target is None or not arm_cpu.is_cortex_m(target) or \
            call.args[0].struct_info.dtype != "float32":
        return base

    def compute(call, a):
        at = call.attrs
        return arm_cpu.quantize_cortex_m(a[0], a[1], a[2], at.axis, at.out_dtype)
    return OpStrategy("quantize_cortex_m", compute, base.schedule)


STRATEGIES = {
    "relax.qnn.conv2d": _conv2d,
    "relax.qnn.quantize": _quantize,
    "relax.qnn.requantize": _requantize,
    "relax.qnn.conv2d_NCHWc": _conv2d_nchwc,
    "relax.qnn.matmul": _qnn("schedule_qnn_matmul"),
    "relax.qnn.matmul_packed": _matmul_packed,
    "relax.qnn.depthwise_conv2d_NCHWc": _depthwise_nchwc,
}

for _name, _strategy in STRATEGIES.items():
    register_strategy(_name, _strategy)


__all__ = ["STRATEGIES"]
