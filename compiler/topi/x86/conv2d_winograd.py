"""Winograd convolution (topi.nn.conv2d_winograd_NCHWc) for x86 and any CPU, with what was
fused after it (bias, scale/shift, a residual add, relu/clip).

Four stages at the root, each in parallel:
  pad          (n, block, row) in parallel, the block's channels vectorized;
  wino_input   per tile row in parallel, per (tile, input-channel block): the first half of the
               transform into a local buffer, then the a x a points unrolled, channels
               vectorized;
  wino_gemm    per (point, group of `oc_blocks` output-channel blocks): register tiles of
               `oc_blocks` blocks x `tile_count` tiles accumulate over the input channels in a
               rolled loop (one broadcast per tile, one weight vector per block and step), in
               chunks of GEMM_CHANNEL_CHUNK channels each summed from zero;
  the output   per (n, block, tile row) in parallel, per tile: the first half of the transform
               into a local buffer, then the m x m pixels unrolled, the block's channels
               vectorized, the epilogue applied as the result is stored.

Tunables (keyword arguments, defaults from the constants and the target's vector ISA):
oc_blocks, tile_count.
"""
from __future__ import annotations

from typing import Optional

from ...target.isa import vector_isa
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import schedule_anchored
from .conv2d import schedule_pad
from .conv2d_nchwc import BAND_ACCUMULATOR_SHARE, MAX_OC_BLOCKS

_TAG = "conv2d_winograd_NCHWc"
# Most tiles per register tile of the product (broadcasts per step).
MAX_TILE_COUNT = 8
# The product sums the input channels in chunks of this many (a divisor is taken), each from
# zero, then added to the tile's accumulators: a running sum over all of them rounds each step
# at the size of the whole sum (on ResNet-18's 3x3 layers the error from a float64
# convolution is then ONNX Runtime's, 1.2-3x less than with one running sum).
GEMM_CHANNEL_CHUNK = 16


def gemm_tile(ocb: int, tiles: int, registers: int):
    """(oc_blocks, tile_count) of the product's register tile: oc_blocks dividing `ocb` (up to
    MAX_OC_BLOCKS), tile_count dividing `tiles` (up to MAX_TILE_COUNT); accumulators, a
    broadcast per tile and a weight vector in the `registers`, at most BAND_ACCUMULATOR_SHARE
    of them accumulating; the most accumulators, then the fewest loads per multiply-add."""
    limit = int(registers * BAND_ACCUMULATOR_SHARE)
    fits = [(ob, t) for ob in range(1, min(ocb, MAX_OC_BLOCKS) + 1) if ocb % ob == 0
            for t in range(1, min(tiles, MAX_TILE_COUNT) + 1)
            if tiles % t == 0 and ob * t + t + 1 <= registers and ob * t <= limit]
    return max(fits, key=lambda f: (f[0] * f[1], -(f[0] + f[1]) / (f[0] * f[1]), f[0]))


def _schedule_input(s, v, lanes, side, tiles_per_row):
    stage = s[v]
    e, p, c = stage.op.axis
    row, col = stage.split(p, factor=tiles_per_row)   # the tile's origin without a division
    cb, ci = stage.split(c, factor=lanes)
    xi, nu = stage.split(e, factor=side)
    stage.reorder(row, col, cb, xi, nu, ci)
    stage.parallel(row)
    stage.unroll(nu)           # the point's column picks the sum: unrolled, it is constant
    stage.vectorize(ci)
    cols = s[v.op.input_tensors[0]]
    cols.set_scope("local")
    cols.compute_at(stage, cb)
    cxi, _, _, cc = cols.op.axis
    cols.unroll(cxi)
    cols.vectorize(cc)


def _schedule_gemm(s, mm, oc_blocks, tile_count, channel_chunk):
    stage = s[mm]
    acc = s.cache_write(mm, "local")
    e, f, p, o = stage.op.axis
    fo, fi = stage.split(f, factor=oc_blocks)
    po, pi = stage.split(p, factor=tile_count)
    stage.reorder(e, fo, po, fi, pi, o)
    stage.parallel(stage.fuse(e, fo))
    stage.unroll(fi)
    stage.unroll(pi)
    stage.vectorize(o)
    a = s[acc]
    a.compute_at(stage, po)
    (k,) = a.op.reduce_axis
    ko, _ = a.split(k, factor=divisor_at_most(get_const_tuple((k.dom.extent,))[0],
                                               channel_chunk))
    # each chunk of input channels summed from zero, then added (see GEMM_CHANNEL_CHUNK)
    part = s[s.rfactor(acc, ko)]
    part.set_scope("local")
    _, af, ap, ao, chunks = a.op.axis + a.op.reduce_axis
    a.reorder(chunks, af, ap, ao)
    a.unroll(af)
    a.unroll(ap)
    a.vectorize(ao)
    part.compute_at(a, chunks)
    _, _, pf, pp, po_ = part.op.axis
    (ki,) = part.op.reduce_axis
    part.reorder(ki, pf, pp, po_)
    part.pragma(ki, "unroll_disable", 1)
    part.unroll(pf)
    part.unroll(pp)
    part.vectorize(po_)


def _schedule_output(s, out_op, rows, m):
    stage = s[out_op]
    n, f, y, x, o = stage.op.axis
    yo, yi = stage.split(y, factor=m)
    xo, xi = stage.split(x, factor=m)
    stage.reorder(n, f, yo, xo, yi, xi, o)
    stage.parallel(stage.fuse(n, f, yo))
    stage.unroll(yi)
    stage.unroll(xi)
    stage.vectorize(o)
    r = s[rows]
    r.set_scope("local")
    r.compute_at(stage, xo)
    *_, i, rx, ro = r.op.axis
    r.unroll(i)
    r.unroll(rx)
    r.vectorize(ro)


def schedule_conv2d_winograd_NCHWc(outs, oc_blocks: Optional[int] = None,
                                   tile_count: Optional[int] = None):
    """Schedule conv2d_winograd_NCHWc and its fused epilogue (see the module docstring).
    oc_blocks, tile_count: the product's register tile (divisors are taken); None:
    `gemm_tile` for the target's ISA."""
    registers = vector_isa().registers

    def tile(s, anchor, out_op):
        rows = anchor.input_tensors[0]
        mm = rows.op.input_tensors[0]
        v = mm.op.input_tensors[0]
        pad = v.op.input_tensors[0].op.input_tensors[0]
        points, ocb, tiles, ob = get_const_tuple(mm.shape)
        a = round(points ** 0.5)
        ib = get_const_tuple(pad.shape)[4]
        schedule_pad(s, pad.op)
        _schedule_input(s, v, ib, a, get_const_tuple(rows.shape)[4] // (a - 2))
        ob_tile, count = gemm_tile(ocb, tiles, registers)
        _schedule_gemm(s, mm, divisor_at_most(ocb, oc_blocks) if oc_blocks else ob_tile,
                       divisor_at_most(tiles, tile_count) if tile_count else count,
                       GEMM_CHANNEL_CHUNK)
        if out_op is not anchor:
            s[anchor].compute_inline()
        _schedule_output(s, out_op, rows, a - 2)

    return schedule_anchored(as_outputs(outs), lambda t: t == _TAG, tile)
