"""3-d convolution in the blocked layout NCDHW[x]c for x86 (and any CPU): conv3d_NCDHWc.

The tilings of conv2d_NCHWc (conv2d_nchwc.py) with one more output axis, the depth, which
runs outside the tiles: a register tile holds `oc_blocks` output-channel blocks (one vector
each) by `ow_tile` output pixels, and the reduction runs over the input-channel blocks, the
kernel's depth, rows and columns, and the channels of a block. The choices (bands or rows,
tile, band rows, channel chunk) are conv2d_NCHWc's for a 2-d convolution of one output depth
plane whose kernel window has the kd x kh x kw taps (`conv3d_tiling`):

  band (long reductions: the 3x3x3 layers, the 3-channel 3x7x7 stem): the accumulators of a
      band of output rows of one depth plane live in an L1-sized buffer; the reduction runs
      in passes of `channel_chunk` input-channel blocks, each pass summed from zero over the
      band (an rfactor) and then added, so one pass's weights stay in L1 across the band and
      no running sum grows over the whole reduction (3x3x3 over 16 channels: 432 terms a
      pass).
  rows (short reductions, 1x1x1 convolutions whose row tile's weights fit in L1): one tile
      covers `ow_tile` columns of one output row and keeps its accumulators in registers
      through the reduction (with a kernel window, each input-channel block summed from zero,
      then added).

What was fused after the convolution (bias, a residual add, relu) is applied as the result
goes to the output. Padding is a stage of its own at the root: (n, channel block, depth) in
parallel, the block's channels vectorized. The (n, channel-block group, depth, band or row)
loops are fused and run in parallel.
"""
from __future__ import annotations

from ...ir.dtype import DType
from ...target.isa import vector_isa
from ..utils import as_outputs, get_const_tuple, mac_count
from .anchored import accumulator_stages, schedule_anchored
from .conv2d_nchwc import PARALLEL_MIN_MACS, conv_tiling

_TAG = "conv3d_NCDHWc"


def conv3d_tiling(out_shape, kernel_shape, itemsize: int, registers: int, **explicit):
    """(band_rows, oc_blocks, ow_tile, channel_chunk) of a conv3d_NCDHWc with output
    `out_shape` [N, OC/o, OD, OH, OW, o] and weights `kernel_shape` [OC/o, IC/i, KD, KH, KW, i,
    o]: `conv_tiling` of one output depth plane, the window's kd x kh x kw taps counted as
    its kernel rows (band_rows 0: row tiles). `explicit`: conv_tiling's keyword choices."""
    n, ocb, _, oh, ow, ob = out_shape
    ocb_k, icb, kd, kh, kw, ib, kob = kernel_shape
    return conv_tiling((n, ocb, oh, ow, ob), (ocb_k, icb, kd * kh, kw, ib, kob), itemsize,
                       registers, **explicit)


def _extent(axis) -> int:
    return get_const_tuple((axis.dom.extent,))[0]


def _schedule_pad(s, pad_op):
    stage = s[pad_op]
    axes = list(stage.op.axis)
    stage.parallel(stage.fuse(*axes[:3]))
    stage.vectorize(axes[-1])


def _row_tile(s, anchor, out_op, oc_blocks, ow_tile, parallel):
    acc, o = accumulator_stages(s, anchor, out_op)
    n, f, z, y, x, fi = o.op.axis
    fo, fb = o.split(f, factor=oc_blocks)
    xo, xi = o.split(x, factor=ow_tile)
    o.reorder(n, fo, z, y, xo, fb, xi, fi)
    outer = o.fuse(n, fo, z, y)
    if parallel:
        o.parallel(outer)
    o.unroll(fb)
    o.unroll(xi)
    o.vectorize(fi)
    a = s[acc]
    a.compute_at(o, xo)
    reduce = list(a.op.reduce_axis)
    if _extent(reduce[1]) * _extent(reduce[2]) * _extent(reduce[3]) > 1:
        # a kernel window: each input-channel block (or, with one block, each kernel depth
        # tap) summed from zero, then added, as the band's passes are
        split = reduce[0] if _extent(reduce[0]) > 1 else reduce[1]
        part = s[s.rfactor(acc, split)]
        part.set_scope("local")
        an, af, az, ay, ax, afi, parts = a.op.axis + a.op.reduce_axis
        a.reorder(an, az, ay, parts, af, ax, afi)
        a.unroll(af)
        a.unroll(ax)
        a.vectorize(afi)
        part.compute_at(a, parts)
        a = part
        _, an, af, az, ay, ax, afi = a.op.axis
    else:
        an, af, az, ay, ax, afi = a.op.axis
    a.reorder(an, az, ay, *a.op.reduce_axis, af, ax, afi)
    a.unroll(af)
    a.unroll(ax)
    a.vectorize(afi)


def _band_tile(s, anchor, out_op, oc_blocks, ow_tile, band_rows, channel_chunk, parallel):
    acc, o = accumulator_stages(s, anchor, out_op)
    n, f, z, y, x, fi = o.op.axis
    fo, fb = o.split(f, factor=oc_blocks)
    yo, yi = o.split(y, factor=band_rows)
    o.reorder(n, fo, z, yo, yi, x, fb, fi)
    outer = o.fuse(n, fo, z, yo)
    if parallel:
        o.parallel(outer)
    o.vectorize(fi)
    a = s[acc]
    a.compute_at(o, outer)
    co, _ = a.split(a.op.reduce_axis[0], factor=channel_chunk)
    # each pass sums its chunk of the reduction from zero (the `.rf` stage, over the band),
    # then adds it to the band's accumulators
    part = s[s.rfactor(acc, co)]
    an, af, az, ay, ax, afi, passes = a.op.axis + a.op.reduce_axis
    a.reorder(an, passes, af, az, ay, ax, afi)
    a.vectorize(afi)
    part.compute_at(a, passes)
    _, pn, pf, pz, py, px, pfi = part.op.axis
    ci, *window, channels = part.op.reduce_axis
    po, pi = part.split(part.fuse(pz, py, px), factor=ow_tile)
    part.reorder(pn, po, ci, *window, channels, pf, pi, pfi)
    part.pragma(po, "loop_partition", 1)
    # on `ci`: a second pragma on `po` would hide its loop_partition pragma
    part.pragma(ci, "no_strength_reduce", 1)
    part.pragma(channels, "unroll_disable", 1)
    part.unroll(pf)
    part.unroll(pi)
    part.vectorize(pfi)


def schedule_conv3d_NCDHWc(outs, parallel_min_macs: int = PARALLEL_MIN_MACS, **explicit):
    """Schedule conv3d_NCDHWc and what was fused around it (the pad before, bias / residual /
    activation after): bands or rows as the module docstring says. `explicit`: band_rows,
    oc_blocks, ow_tile, channel_chunk, max_accumulators as `conv_tiling` takes them (None:
    chosen for the target's vector ISA). Below `parallel_min_macs` multiply-adds the outer
    loop runs serially."""
    registers = vector_isa().registers

    def tile(s, anchor, out_op):
        out = anchor.output(0)
        kernel = next(t for t in anchor.input_tensors if t.ndim == 7)
        band, ob, t, chunk = conv3d_tiling(
            get_const_tuple(out.shape), get_const_tuple(kernel.shape), DType(out.dtype).bytes,
            registers, **explicit)
        parallel = mac_count(anchor) >= parallel_min_macs
        if band == 0:
            _row_tile(s, anchor, out_op, ob, t, parallel)
        else:
            _band_tile(s, anchor, out_op, ob, t, band, chunk, parallel)

    return schedule_anchored(as_outputs(outs), lambda t: t == _TAG, tile, keep_pad=True,
                             pad_schedule=_schedule_pad)
