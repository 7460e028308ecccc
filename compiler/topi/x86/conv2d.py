"""Convolutions in NCHW for x86: conv2d, group, depthwise and transposed (all have output axes
(n, f, y, x) and a reduction).

Register tiling: a tile of CONV_CHANNEL_BLOCK output channels by CONV_WIDTH_BLOCK output
columns is accumulated in a local buffer (registers after unrolling and vectorizing) while the
reduction runs over input channels and the kernel window; the tile then goes to the output
through whatever was fused after the convolution (bias, batch-norm scale/shift, a residual add,
relu). The (n, channel block, row) loops are fused and run in parallel. A padding stage is
computed once, at the root, in parallel.
"""
from __future__ import annotations

from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import accumulator_stages, schedule_anchored

# Output channels per register tile (unrolled).
CONV_CHANNEL_BLOCK = 8
# Output columns per register tile (vectorized): one AVX2 register of float32.
CONV_WIDTH_BLOCK = 8
# Depthwise: output channels per tile (each reads its own input channel).
DEPTHWISE_CHANNEL_BLOCK = 4

_CONV_TAGS = ("conv2d_nchw", "group_conv2d_nchw", "depthwise_conv2d_nchw",
              "conv2d_transpose_nchw")


def _is_conv(t: str) -> bool:
    return t in _CONV_TAGS


def schedule_pad(s, pad_op):
    """A pad stage at the root: (n, c) fused and in parallel, rows serial; in a blocked
    layout (5-d, NCHW[x]c) (n, c block, row) in parallel and the block's channels vectorized."""
    stage = s[pad_op]
    axes = list(stage.op.axis)
    if len(axes) == 5:
        stage.parallel(stage.fuse(*axes[:3]))
        stage.vectorize(axes[4])
    elif len(axes) >= 3:
        stage.parallel(stage.fuse(*axes[:2]))
    elif axes:
        stage.parallel(axes[0])


def _blocks(anchor):
    _, f, _, w = get_const_tuple(anchor.output(0).shape)
    cb = DEPTHWISE_CHANNEL_BLOCK if anchor.tag == "depthwise_conv2d_nchw" else CONV_CHANNEL_BLOCK
    return divisor_at_most(f, cb), divisor_at_most(w, CONV_WIDTH_BLOCK)


def _tile(s, anchor, out_op):
    fb, xb = _blocks(anchor)
    acc, out_stage = accumulator_stages(s, anchor, out_op)
    n, f, y, x = out_stage.op.axis
    fo, fi = out_stage.split(f, factor=fb)
    xo, xi = out_stage.split(x, factor=xb)
    out_stage.reorder(n, fo, y, xo, fi, xi)
    out_stage.parallel(out_stage.fuse(n, fo, y))
    out_stage.vectorize(xi)
    a = s[acc]
    a.compute_at(out_stage, xo)
    an, af, ay, ax = a.op.axis
    a.reorder(an, ay, *a.op.reduce_axis, af, ax)
    a.unroll(af)
    a.vectorize(ax)


def _schedule(outs):
    return schedule_anchored(as_outputs(outs), _is_conv, _tile, keep_pad=True,
                             pad_schedule=schedule_pad)


def schedule_conv2d_nchw(outs):
    """Schedule conv2d_nchw (and what was fused around it: pad, bias, bn, residual, relu)."""
    return _schedule(outs)


def schedule_group_conv2d_nchw(outs):
    return _schedule(outs)


def schedule_depthwise_conv2d_nchw(outs):
    return _schedule(outs)


def schedule_conv2d_transpose_nchw(outs):
    return _schedule(outs)
