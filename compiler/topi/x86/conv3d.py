"""3-d convolution in NCDHW for x86 (conv3d_ncdhw, groups included), as the 2-d convolutions
of conv2d.py: a tile of CONV3D_CHANNEL_BLOCK output channels by CONV3D_WIDTH_BLOCK output
columns is accumulated in a local buffer (registers after unrolling and vectorizing) while
the reduction runs over the input channels and the kernel's depth, rows and columns. A long
reduction runs in two levels (topi.nn.conv3d): each chunk's partial sums in a register tile of
their own, added to the output's tile after the chunk. The tile then goes to the output
through what was fused after the convolution (bias, a residual add, relu). The (n, channel
block, depth, row) loops are fused and run in parallel. A padding stage is computed once, at
the root: (n, channel, depth) in parallel.
"""
from __future__ import annotations

from ..nn.conv3d import PARTIAL_TAG
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import accumulator_stages, schedule_anchored

# Output channels per register tile (unrolled).
CONV3D_CHANNEL_BLOCK = 8
# Output columns per register tile (vectorized): one AVX2 register of float32.
CONV3D_WIDTH_BLOCK = 8


def _is_conv3d(t: str) -> bool:
    return t == "conv3d_ncdhw"


def _schedule_pad(s, pad_op):
    stage = s[pad_op]
    axes = list(stage.op.axis)
    stage.parallel(stage.fuse(*axes[:3]))


def _tile(s, anchor, out_op):
    _, f, _, _, w = get_const_tuple(anchor.output(0).shape)
    fb, xb = divisor_at_most(f, CONV3D_CHANNEL_BLOCK), divisor_at_most(w, CONV3D_WIDTH_BLOCK)
    partial = next((t.op for t in anchor.input_tensors if t.op.tag == PARTIAL_TAG), None)
    acc, out_stage = accumulator_stages(s, anchor, out_op)
    n, f, z, y, x = out_stage.op.axis
    fo, fi = out_stage.split(f, factor=fb)
    xo, xi = out_stage.split(x, factor=xb)
    out_stage.reorder(n, fo, z, y, xo, fi, xi)
    out_stage.parallel(out_stage.fuse(n, fo, z, y))
    out_stage.vectorize(xi)
    a = s[acc]
    a.compute_at(out_stage, xo)
    an, af, az, ay, ax = a.op.axis
    a.reorder(an, az, ay, *a.op.reduce_axis, af, ax)
    a.unroll(af)
    a.vectorize(ax)
    if partial is None:
        return
    # two-level sums: each chunk's tile of partial sums is accumulated in registers, then
    # added to the output tile
    p = s[partial]
    p.compute_at(a, a.op.reduce_axis[0])
    pn, pf, pz, py, px, pq = p.op.axis
    p.reorder(pn, pz, py, pq, *p.op.reduce_axis, pf, px)
    p.unroll(pf)
    p.vectorize(px)


def schedule_conv3d_ncdhw(outs):
    """Schedule conv3d_ncdhw (and what was fused around it: pad, bias, residual, relu)."""
    return schedule_anchored(as_outputs(outs), _is_conv3d, _tile, keep_pad=True,
                             pad_schedule=_schedule_pad)
