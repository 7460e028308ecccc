"""Schedules of the quantized convolution and matmul (topi.nn.qnn) for x86.

Their reduction stages carry the float operators' tags, so they take the float schedules'
register tiles (conv2d: output channels unrolled by output columns vectorized, (n, channel
block, row) in parallel, the zero-point padding a stage of its own; matmul: the packed-GEMM
register tile in parallel blocks), with the int32 accumulator in the float one's place and the
zero-point correction, bias and requantization inlined after it. A matmul whose left operand
has more than 2 dims takes the generic schedule. The weight-sum stage of a correction (one
reduction per output channel) runs once per call at the root. The blocked integer convolution
(VNNI) is scheduled in qnn_conv2d_nchwc.py, the blocked depthwise one in
qnn_depthwise_conv2d_nchwc.py, the packed matmul (VNNI) in qnn_matmul_int8.py.
"""
from __future__ import annotations

from ..generic import default_schedule
from ..utils import as_outputs, find_anchor
from .conv2d import schedule_conv2d_nchw
from .dense import schedule_matmul
from .qnn_conv2d_nchwc import schedule_qnn_conv2d_NCHWc  # noqa: F401
from .qnn_depthwise_conv2d_nchwc import schedule_qnn_depthwise_conv2d_NCHWc  # noqa: F401
from .qnn_matmul_int8 import schedule_qnn_matmul_int8  # noqa: F401


def schedule_qnn_conv2d_nchw(outs):
    """Schedule qnn_conv2d_nchw and what was fused after it (bias, requantize)."""
    return schedule_conv2d_nchw(outs)


def schedule_qnn_matmul(outs):
    """Schedule qnn_matmul and what was fused after it (bias, requantize)."""
    outs = as_outputs(outs)
    if find_anchor(outs, lambda t: t == "matmul") is None:
        return default_schedule(outs)
    return schedule_matmul(outs)
