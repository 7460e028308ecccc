"""Winograd convolution (topi.nn.conv2d_winograd_NCHWc) for x86 and any CPU, with what was
fused after it (bias, scale/shift, a residual add, relu/clip).

Four stages: the pad, the input transform (`wino_input`: per tile and input-channel block, the
first half of the transform into a local buffer, then the a x a points unrolled, channels
vectorized), the product (`wino_gemm`: per point, register tiles of `oc_blocks` output-channel
blocks x `tile_count` tiles accumulating over the input channels in a rolled loop, one
broadcast per tile and one weight vector per block and step, in chunks of GEMM_CHANNEL_CHUNK
channels each summed from zero) and the output (per tile: the first half of the transform into
a local buffer, then the m x m pixels unrolled, the block's channels vectorized, the epilogue
applied as the result is stored). Two ways to run them:

  stages (a small image): each stage at the root, in parallel (the input transform per tile
      row, the product per (point, group of channel blocks), the output per (n, block, tile
      row)): the most parallel work per stage.
  rows (the transformed input and the product together take at least ROWS_MIN_BYTES): per
      tile row, in parallel, the input transform and the product of that row's tiles into
      buffers of the row, then its output, so the two stay in cache between the stages
      instead of going through memory. Inception-v3's 80 -> 192 channels at 73 x 73 (6.6 and
      16 MB at the root): 11.9 -> 8.8 ms at 1 thread, 7.2 -> 5.3 at 2; ResNet-18's 64
      channels at 56 x 56 (3.2 + 3.2 MB): 1.33 -> 1.15 ms at 1 thread, the same within noise
      at 2. Below the threshold it gains nothing, and at 7 x 7 (4 tile rows) it was 5-10%
      slower. The results are the same to the bit either way.

Tunables (keyword arguments, defaults from the constants and the target's vector ISA):
oc_blocks, tile_count, tile_rows.
"""
from __future__ import annotations

from typing import Optional

from ...ir.dtype import DType
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
# The stages run per tile row (`tile_rows`) when the transformed input and the product at the root
# would take at least this many bytes.
ROWS_MIN_BYTES = 4 << 20


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


def _schedule_input(s, v, lanes, side, tiles_per_row, parallel=True):
    """The input transform per (tile row, tile, input-channel block), the rows in parallel
    unless it runs inside a parallel loop."""
    stage = s[v]
    e, p, c = stage.op.axis
    row, col = stage.split(p, factor=tiles_per_row)   # the tile's origin without a division
    cb, ci = stage.split(c, factor=lanes)
    xi, nu = stage.split(e, factor=side)
    stage.reorder(row, col, cb, xi, nu, ci)
    if parallel:
        stage.parallel(row)
    stage.unroll(nu)           # the point's column picks the sum: unrolled, it is constant
    stage.vectorize(ci)
    cols = s[v.op.input_tensors[0]]
    cols.set_scope("local")
    cols.compute_at(stage, cb)
    cxi, _, _, cc = cols.op.axis
    cols.unroll(cxi)
    cols.vectorize(cc)


def _schedule_gemm(s, mm, oc_blocks, tile_count, channel_chunk, parallel=True):
    """The product's loops (point, channel-block group, tile group, then the register tile;
    the first two in parallel unless it runs inside a parallel loop) and its accumulators."""
    stage = s[mm]
    acc = s.cache_write(mm, "local")
    e, f, p, o = stage.op.axis
    fo, fi = stage.split(f, factor=oc_blocks)
    po, pi = stage.split(p, factor=tile_count)
    stage.reorder(e, fo, po, fi, pi, o)
    if parallel:
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


def _schedule_output(s, out_op, rows, m, tile_rows):
    """The output per tile, m x m pixels unrolled; in parallel over (n, block, tile row), or
    with `tile_rows` over (n, tile row) with the blocks inside. Returns the parallel loop."""
    stage = s[out_op]
    n, f, y, x, o = stage.op.axis
    yo, yi = stage.split(y, factor=m)
    xo, xi = stage.split(x, factor=m)
    if tile_rows:
        stage.reorder(n, yo, f, xo, yi, xi, o)
        outer = stage.fuse(n, yo)
    else:
        stage.reorder(n, f, yo, xo, yi, xi, o)
        outer = stage.fuse(n, f, yo)
    stage.parallel(outer)
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
    return outer


def runs_in_tile_rows(points: int, tiles: int, in_channels: int, out_channels: int,
                      itemsize: int) -> bool:
    """Whether the stages run per tile row: the transformed input [points, tiles, in] and the
    product [points, tiles, out] take at least ROWS_MIN_BYTES."""
    return points * tiles * (in_channels + out_channels) * itemsize >= ROWS_MIN_BYTES


def schedule_conv2d_winograd_NCHWc(outs, oc_blocks: Optional[int] = None,
                                   tile_count: Optional[int] = None,
                                   tile_rows: Optional[bool] = None):
    """Schedule conv2d_winograd_NCHWc and its fused epilogue (see the module docstring).
    oc_blocks, tile_count: the product's register tile (divisors are taken); None:
    `gemm_tile` for the target's ISA. tile_rows: run the stages per tile row (None:
    `runs_in_tile_rows`)."""
    registers = vector_isa().registers

    def tile(s, anchor, out_op):
        rows = anchor.input_tensors[0]
        mm = rows.op.input_tensors[0]
        v = mm.op.input_tensors[0]
        pad = v.op.input_tensors[0].op.input_tensors[0]
        points, ocb, tiles, ob = get_const_tuple(mm.shape)
        a = round(points ** 0.5)
        ib = get_const_tuple(pad.shape)[4]
        per_row = get_const_tuple(rows.shape)[4] // (a - 2)
        by_rows = tile_rows if tile_rows is not None else runs_in_tile_rows(
            points, tiles, get_const_tuple(v.shape)[2], ocb * ob, DType(mm.dtype).bytes)
        schedule_pad(s, pad.op)
        if out_op is not anchor:
            s[anchor].compute_inline()
        outer = _schedule_output(s, out_op, rows, a - 2, by_rows)
        ob_tile, count = gemm_tile(ocb, per_row if by_rows else tiles, registers)
        _schedule_gemm(s, mm, divisor_at_most(ocb, oc_blocks) if oc_blocks else ob_tile,
                       divisor_at_most(per_row if by_rows else tiles, tile_count) if tile_count
                       else count,
                       GEMM_CHANNEL_CHUNK, parallel=not by_rows)
        _schedule_input(s, v, ib, a, per_row, parallel=not by_rows)
        if by_rows:     # the row's tiles transformed and multiplied in buffers of the row
            s[mm].compute_at(s[out_op], outer)
            s[v].compute_at(s[out_op], outer)

    return schedule_anchored(as_outputs(outs), lambda t: t == _TAG, tile)
