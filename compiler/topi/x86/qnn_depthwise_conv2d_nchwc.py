"""Schedule of the blocked integer depthwise convolution
(topi.nn.qnn.qnn_depthwise_conv2d_NCHWc_int8) for x86.

Each output row of a channel block is computed in tiles of `ow_tile` columns: per kernel
position, the data of `ow_tile` columns (one vector of the block's channels each, widened to
int32) times the kernel position's weight vector, multiply-added into `ow_tile` int32 vectors
(vpmulld + vpaddd; the products of 8-bit values need no wider type). The (n, channel block,
row) loops are fused and run in parallel; the padded data (the zero point at the borders) is
a stage of its own at the root. What was fused after the convolution (the zero-point
correction, bias, requantize, the clamp of a relu) is applied as the tile goes to the output.
"""
from __future__ import annotations

from typing import Optional

from ..utils import as_outputs, divisor_at_most, get_const_tuple, mac_count
from .anchored import accumulator_stages, schedule_anchored
from .conv2d import schedule_pad
from .conv2d_nchwc import PARALLEL_MIN_MACS

TAG = "depthwise_conv2d_NCHWc_int8"
# Output columns of a register tile.
OW_TILE = 8


def schedule_qnn_depthwise_conv2d_NCHWc(outs, ow_tile: Optional[int] = None):
    """Schedule qnn_depthwise_conv2d_NCHWc_int8 and what was fused after it. ow_tile: the
    output columns of a register tile (a divisor of the width is taken; None: OW_TILE)."""

    def tile(s, anchor, out_op):
        _, _, _, ow, _ = get_const_tuple(anchor.output(0).shape)
        xt = divisor_at_most(ow, ow_tile or OW_TILE)
        acc, o = accumulator_stages(s, anchor, out_op)
        n, c, y, x, ci = o.op.axis
        xo, xi = o.split(x, factor=xt)
        o.reorder(n, c, y, xo, xi, ci)
        outer = o.fuse(n, c, y)
        if mac_count(anchor) >= PARALLEL_MIN_MACS // 4:
            o.parallel(outer)
        o.unroll(xi)
        o.vectorize(ci)
        a = s[acc]
        a.compute_at(o, xo)
        an, ac, ay, ax, aci = a.op.axis
        ry, rx = a.op.reduce_axis
        a.reorder(an, ac, ay, ry, rx, ax, aci)
        a.unroll(rx)
        a.unroll(ax)
        a.vectorize(aci)

    return schedule_anchored(as_outputs(outs), lambda t: t == TAG, tile, keep_pad=True,
                             pad_schedule=schedule_pad)


__all__ = ["schedule_qnn_depthwise_conv2d_NCHWc"]
