"""Kernels for Arm Cortex-M CPUs: the DSP extension's SMLAD (dsp.py) and MVE's dot product of
eight 16-bit lanes (mve.py), the integer convolution over 16-bit pairs that uses them and the
grouped convolution's schedule (qnn_conv2d.py), quantize and requantize in single precision
with the reference formulas' results (qnn_requantize.py)."""
from . import dsp, mve, qnn_conv2d, qnn_requantize
from .dsp import has_dsp, is_cortex_m
from .mve import has_mve
from .qnn_conv2d import (
    qnn_conv2d_nchw_smlad,
    schedule_qnn_conv2d_nchw_smlad,
    schedule_qnn_group_conv2d_nchw,
)
from .qnn_requantize import quantize_cortex_m, requantize_cortex_m

__all__ = ["dsp", "has_dsp", "has_mve", "is_cortex_m", "mve", "qnn_conv2d",
           "qnn_conv2d_nchw_smlad", "qnn_requantize", "quantize_cortex_m", "requantize_cortex_m",
           "schedule_qnn_conv2d_nchw_smlad", "schedule_qnn_group_conv2d_nchw"]
