"""Convolutions in the blocked layout NCHW[x]c for x86 (and any CPU): conv2d_NCHWc (any
kernel size, stride, 1x1 included) and depthwise_conv2d_NCHWc.

A register tile holds `oc_blocks` output-channel blocks (one vector each) by `ow_tile` output
pixels: oc_blocks * ow_tile vector accumulators; each step of the reduction loads `oc_blocks`
weight vectors and broadcasts `ow_tile` input values. What was fused after the convolution
(bias, scale/shift, a residual add, relu/clip) is applied as the result goes to the output,
so the epilogue costs no pass over memory. Padding is a stage of its own computed once at the
root (in parallel), so the inner loops read the padded input without guards. Two ways to run
the tiles over the output:

  band (the default; every kernel size): the accumulators of `oc_blocks` channel blocks by a
      band of `band_rows` output rows live in a buffer sized for L1 (ACC_BYTES). The reduction
      runs in passes of `channel_chunk` input-channel blocks; in each pass every tile of the
      band sums the kernel window and the channels of those blocks from zero into a pass buffer
      of the band (the `.rf` stage of an rfactor), so one pass's weights and input rows stay in
      L1 across the band; the pass buffer is then added to the accumulators. Summed in passes,
      no step rounds at the size of the whole reduction: on ResNet-18's layers the error from a
      float64 convolution is ONNX Runtime's, 2-4x less than one running sum over every channel.
      Tiles run over the band's pixels flattened (row after row), so any width fits: the one
      short tile at the end is a loop of its own (`loop_partition`) and the others have no
      bounds check. The loop over the channels of an input block stays rolled in LLVM
      (`unroll_disable`): unrolled, its scheduler hoists the loads of several steps and spills a
      full register file (AVX2: 4 x 3, 12 accumulators, 3 broadcasts and a weight vector: 16
      registers). The band's kernel skips LLVM's loop strength reduction (`no_strength_reduce`):
      it took 0.79 of the 5.0 s of LLVM time in ResNet-18's build (compile 5.5 -> 4.8 s without
      it), and the model runs as fast (39.56 vs 39.58 ms at 1 thread, 20.30 vs 20.28 at 2). The
      epilogue then runs over the band.
  rows (short reductions, 1x1 convolutions of one output column, and 1x1 convolutions with
      a tile that divides the width: on AVX2 where the tile's weights fit in L1, on AVX-512
      all of them): one tile covers `ow_tile` columns of one output row and keeps its
      accumulators in registers through the whole reduction (with a kernel window, each
      input-channel block, or with one block each kernel row, summed from zero and then
      added, as the band's passes; a 1x1 kernel in passes of `channel_chunk` input-channel
      blocks, as a band's); the epilogue runs on the tile. The loop over (group of channel
      blocks, row) prefetches the next group's weights while this group's rows run
      (`Stage.prefetch`, a group's rows ahead): the first row of a group otherwise waits on
      weights from L3 or memory, which in a whole model run (weights not in cache: unlike a
      kernel timed alone) made a 1x1 convolution 25-45% slower than its time alone (AVX-512,
      MnasNet's 320 -> 1280 at 7 x 7: 0.48 -> 0.37 ms, alone 0.35). Bands prefetch nothing:
      a call in their reduction loop keeps LLVM from holding the tile's sums in registers
      (squeezenet's 512 -> 1008 band at 13 x 13: 1.7 -> 4.0 ms).

  stem (a kernel window over at most STEM_MAX_CHANNELS input channels: the first convolution
      of an image model, reading its 3-channel image): row tiles of one output-channel block
      by the widest run of columns whose accumulators and kernel-row sums fit the registers
      (`stem_ow_tile`; AVX-512: 1 x 14 at width 112), summed as other row tiles are (so the
      result is the same to the bit). The general row tile spends its registers on channel
      blocks and, doubled by the kernel-row sums, spills: AVX-512, 224 x 224 input,
      MnasNet's 3x3 stride-2 3 -> 32 as 2 x 14 0.47 ms (46 GFLOP/s), as 1 x 14 0.22 ms (100);
      ResNet's 7x7 3 -> 64 as 4 x 4 2.11 ms (112), as 1 x 14 2.06 ms (115).

  depthwise (depthwise_conv2d_NCHWc): tiles of one channel block by `depthwise_ow_tile`
      columns over bands of output rows (`depthwise_band_rows`), the padding done band by band
      into a buffer of the band's padded input rows (at most DEPTHWISE_PAD_BYTES) that the
      band's tiles read while it is in cache. Padded whole at the root first, the input went
      through memory once more: EfficientNet-B0's 96-channel 3x3 stride-2 at 112 x 112 took
      0.65 ms in a model run, 0.31 ms in bands. Groups of g > 1 channels within a block
      (RegNet's 8, ResNeXt's 4): at stride 1 the band's input is arranged by groups once (a
      "group_input" stage in place of the pad stage: g vectors per pixel, lane l of the r-th
      holding channel r of l's group), so the sum reads whole vectors; at stride 2 a pixel is
      read by few taps and is arranged at each read (the g positions unrolled: a load and a
      shuffle each). RegNet-Y-400MF's 208 channels at 14 x 14: 0.113 ms arranged at each read,
      0.084 ms arranged per band; its NCHW kernel took 0.090 ms plus the layout transforms.

The (n, channel-block group, band or row) loops are fused and run in parallel.

Tunables (keyword arguments of `schedule_conv2d_NCHWc`, defaults from the module constants and
the target's vector ISA): oc_blocks, ow_tile, band_rows, channel_chunk, max_accumulators,
unroll_channels, depthwise_ow_tile, depthwise_pad_bytes, parallel_min_macs.
"""
from __future__ import annotations

from typing import Optional

from ...ir.dtype import DType
from ...target.isa import vector_isa
from ..utils import as_outputs, divisor_at_most, get_const_tuple, mac_count
from .anchored import accumulator_stages, is_kept_input, schedule_anchored
from .conv2d import schedule_pad

# Vector registers never used as accumulators (at least the broadcast input value and one
# weight vector; `tile_shape` also keeps one register per channel block of weights).
FREE_REGISTERS = 2
# Fewest accumulators of a register tile where the shape allows (two FMA units with a latency
# of four cycles need eight independent sums in flight).
MIN_ACCUMULATORS = 8
# Most output-channel blocks per register tile.
MAX_OC_BLOCKS = 4
# Most output columns per register tile.
MAX_OW_TILE = 14
# Band tiles: the most accumulators, as a share of the vector registers (AVX2: 12 of 16; more
# leave too few for the broadcasts and a weight vector).
BAND_ACCUMULATOR_SHARE = 0.75
# Band tiles: the most pixels per tile with more than one channel block (2 x 5 measured 5-15%
# slower than 2 x 4), except for a tile that divides its band (EVEN_TILE_SHARE).
MAX_BAND_PIXELS = 4
# Band tiles: a tile whose pixel count divides the band's (no tail tile, whose pixel indices
# take a division and whose few accumulators leave the FMA units idle) is taken over the best
# tile when it has at least this share of its accumulators (AVX-512 at 7 x 7: 2 x 7 instead of
# 4 x 4 and a 1-pixel tail, 2-4% faster and LLVM's time halved).
EVEN_TILE_SHARE = 0.85
# Bands or rows: a kernel window larger than 1x1 runs in rows when its whole reduction (input
# channels x window) is shorter than this many steps (16 channels, 3x3: rows 10-15% faster),
# else in bands; a 1x1 convolution runs in rows when it has a pointwise row tile whose weights
# (the tile's channel blocks x input channels) take at most ROW_WEIGHT_BYTES, else in bands
# (AVX2, 512 input channels at 14 x 14: bands 9% faster; 256 at 28 x 28: rows 5% faster).
# With ROWS_REGISTERS vector registers or more (AVX-512) it runs in rows whenever it has such a
# tile: 2 x 7 or 4 x 4 rows (in passes of 64 channels) ran at 101-116 GFLOP/s, most at
# 112-116, against 97-102 for bands on ResNet-50's and ResNeXt's 1x1 convolutions of 256-2048
# input channels at 7-28 pixels wide.
BAND_MIN_STEPS = 256
ROW_WEIGHT_BYTES = 32 * 1024
ROWS_REGISTERS = 32
# Band tiles: the accumulator buffer of a band (oc_blocks x band_rows x width vectors) stays
# within this many bytes, i.e. in L1 beside one pass's weights and input rows.
ACC_BYTES = 32 * 1024
# Band tiles: a pass over the input-channel blocks runs at least this many reduction steps
# (kernel window x channels) per load and store of the accumulators.
MIN_PASS_STEPS = 64
# Stem: the most input channels (blocks x block) of a convolution with a kernel window that
# runs as a stem.
STEM_MAX_CHANNELS = 4
# Depthwise: output columns per tile (each a vector of the channel block).
DEPTHWISE_OW_TILE = 8
# Depthwise: the most bytes of padded input rows per band of output rows.
DEPTHWISE_PAD_BYTES = 128 * 1024
# Below this many multiply-adds a convolution runs serially (a parallel launch costs more).
PARALLEL_MIN_MACS = 1 << 19

_TAGS = ("conv2d_NCHWc", "depthwise_conv2d_NCHWc")


def pointwise_tile(ocb: int, ow: int, registers: int):
    """The row tile of a 1x1 convolution: the most accumulators, then the most channel blocks
    (2 to MAX_OC_BLOCKS, dividing `ocb`, by at least 2 columns dividing `ow`), in half the
    `registers` (AVX2: 4 x 2; AVX-512 at width 14: 2 x 7, 6% faster than 4 x 2); None where
    there is none (then it runs in bands)."""
    fits = [(ob, t) for ob in range(2, min(ocb, MAX_OC_BLOCKS) + 1) if ocb % ob == 0
            for t in range(2, min(ow, MAX_OW_TILE) + 1)
            if ow % t == 0 and ob * t <= registers // 2 and ob * t + ob + 1 <= registers]
    return max(fits, key=lambda f: (f[0] * f[1], f[0])) if fits else None


def tile_shape(ocb: int, ow: int, registers: int, max_accumulators: Optional[int] = None,
               pointwise: bool = False):
    """(oc_blocks, ow_tile) for `ocb` output-channel blocks and an output width `ow`: both
    divisors (no tails), no more accumulators than fit in the vector `registers` (less
    FREE_REGISTERS and one weight vector per channel block); among the tiles with at least
    MIN_ACCUMULATORS (where any has), the fewest loads per multiply-add (AVX2: 2 x 4 at
    widths 56 and 28 with enough blocks, 4 x 2 at 14, 1 x 7 at 7; measured 5-15% faster than
    the widest 1 x 14 tile at 56 and 28).
    A `pointwise` (1x1) convolution prefers more channel blocks: up to MAX_OC_BLOCKS of them
    by at least 2 columns, in half the registers (4 x 2 on AVX2, measured 15-45% faster there
    than 1 x 14); without such a tile it takes the general one."""
    if pointwise and max_accumulators is None:
        best = pointwise_tile(ocb, ow, registers)
        if best is not None:
            return best
    limit = max_accumulators or registers - FREE_REGISTERS
    fits = [(ob, t) for ob in range(1, min(ocb, MAX_OC_BLOCKS) + 1) if ocb % ob == 0
            for t in range(1, min(ow, MAX_OW_TILE) + 1)
            if ow % t == 0 and ob * t + ob + 1 <= registers and ob * t <= limit]
    if not fits:
        return 1, 1
    # Enough accumulators to hide the FMA latency, then the fewest loads per FMA (ob weight
    # vectors + t broadcasts feed ob * t FMAs), then the most accumulators, the wider tile.
    enough = min(MIN_ACCUMULATORS, max(ob * t for ob, t in fits))
    return min((f for f in fits if f[0] * f[1] >= enough),
               key=lambda f: ((f[0] + f[1]) / (f[0] * f[1]), -f[0] * f[1], -f[1]))


def band_tile_shape(ocb: int, registers: int, max_accumulators: Optional[int] = None,
                    oc_blocks: Optional[int] = None):
    """(oc_blocks, ow_tile) of a band tile for `ocb` output-channel blocks: oc_blocks a divisor
    of ocb up to MAX_OC_BLOCKS (or the given one); the tile needs its accumulators, one
    broadcast per pixel and one weight vector in the vector `registers`, and at most
    MAX_BAND_PIXELS pixels unless it has one block; the most accumulators up to
    BAND_ACCUMULATOR_SHARE of the registers (or `max_accumulators`), then the fewest loads per
    multiply-add, then the fewer pixels.
    AVX2 (16 registers): 4 x 3 where the blocks divide by 4 (12 accumulators, 7 loads per 12
    FMAs), else 3 x 3, 2 x 4 or 1 x 7."""
    return max(_band_fits(ocb, registers, max_accumulators, oc_blocks, MAX_BAND_PIXELS),
               key=_band_rank)


def _band_fits(ocb, registers, max_accumulators, oc_blocks, max_pixels):
    """The band tiles `band_tile_shape` chooses from (at most `max_pixels` pixels with several
    channel blocks)."""
    limit = max_accumulators or int(registers * BAND_ACCUMULATOR_SHARE)
    blocks = [oc_blocks] if oc_blocks else \
        [ob for ob in range(1, min(ocb, MAX_OC_BLOCKS) + 1) if ocb % ob == 0]
    return [(ob, t) for ob in blocks for t in range(1, MAX_OW_TILE + 1)
            if ob * t + t + 1 <= registers and ob * t <= limit
            and (ob == 1 or t <= max_pixels)] or [(blocks[0], 1)]


def _band_rank(tile):
    ob, t = tile
    return ob * t, -(ob + t) / (ob * t), -t


def _even_band_tile(best, ocb, registers, max_accumulators, oc_blocks, band_of, ow):
    """A band tile dividing its band's pixels (`band_of(oc_blocks)` rows of `ow`) with at least
    EVEN_TILE_SHARE of the accumulators of `best` (`band_tile_shape`'s; any number of pixels
    that fit the registers), or None."""
    fits = _band_fits(ocb, registers, max_accumulators, oc_blocks, MAX_OW_TILE)
    even = [(ob, t) for ob, t in fits
            if ob * t >= EVEN_TILE_SHARE * best[0] * best[1] and band_of(ob) * ow % t == 0]
    return max(even, key=_band_rank) if even else None


def band_rows_for(oh: int, ow: int, oc_blocks: int, lanes: int, itemsize: int) -> int:
    """The most output rows (a divisor of `oh`) whose accumulators (oc_blocks x rows x ow
    vectors of `lanes`) fit in ACC_BYTES; at least one."""
    row_bytes = oc_blocks * ow * lanes * itemsize
    return divisor_at_most(oh, max(1, ACC_BYTES // max(row_bytes, 1)))


def channel_chunk_for(icb: int, window: int, ib: int) -> int:
    """Input-channel blocks per pass: the fewest (a divisor of `icb`) giving MIN_PASS_STEPS
    reduction steps (window = kernel height x width, ib channels per block), else all."""
    for d in range(1, icb + 1):
        if icb % d == 0 and d * window * ib >= MIN_PASS_STEPS:
            return d
    return icb


def is_stem(kernel_shape) -> bool:
    """Whether a conv2d_NCHWc with weights `kernel_shape` [OC/o, IC/i, KH, KW, i, o] runs as a
    stem: a kernel window larger than 1x1 over at most STEM_MAX_CHANNELS input channels."""
    _, icb, kh, kw, ib, _ = kernel_shape
    return icb * ib <= STEM_MAX_CHANNELS and kh * kw > 1


def stem_ow_tile(ow: int, oc_blocks: int, registers: int,
                 max_accumulators: Optional[int] = None) -> int:
    """The columns of a stem's row tile of `oc_blocks` channel blocks: the largest divisor of
    the width `ow` up to MAX_OW_TILE whose accumulators and kernel-row sums (2 x oc_blocks x
    columns), weight vectors (oc_blocks) and broadcast fit the vector `registers`, and whose
    accumulators are at most `max_accumulators`; at least 1."""
    most = (registers - oc_blocks - 1) // (2 * oc_blocks)
    if max_accumulators:
        most = min(most, max_accumulators // oc_blocks)
    return divisor_at_most(ow, max(1, min(most, MAX_OW_TILE)))


def _in_rows(ocb, ow, icb, window, ib, vector_bytes, registers, max_accumulators) -> bool:
    """Whether the automatic choice is row tiles (see BAND_MIN_STEPS)."""
    if window > 1:
        return icb * window * ib < BAND_MIN_STEPS
    if ow == 1 and max_accumulators is None:
        # one column (a squeeze-and-excitation layer on a pooled 1 x 1 image): a band of one
        # pixel pays a pass over its buffer per channel chunk, a row tile sums in registers
        return True
    tile = pointwise_tile(ocb, ow, registers)
    return (max_accumulators is None and tile is not None
            and (registers >= ROWS_REGISTERS
                 or tile[0] * icb * ib * vector_bytes <= ROW_WEIGHT_BYTES))


def conv_tiling(out_shape, kernel_shape, itemsize: int, registers: int,
                band_rows: Optional[int] = None, oc_blocks: Optional[int] = None,
                ow_tile: Optional[int] = None, channel_chunk: Optional[int] = None,
                max_accumulators: Optional[int] = None, stem: bool = False):
    """(band_rows, oc_blocks, ow_tile, channel_chunk) of a conv2d_NCHWc with output
    `out_shape` [N, OC/o, OH, OW, o] and weights `kernel_shape` [OC/o, IC/i, KH, KW, i, o]:
    the explicit values (made to fit: divisors where they must be), the others chosen as
    `schedule_conv2d_NCHWc` documents. band_rows 0: row tiles (channel_chunk unused).
    stem: the convolution is a stem (`is_stem`): row tiles unless band_rows says otherwise, of
    one channel block (or oc_blocks) by `stem_ow_tile` columns (or ow_tile)."""
    _, ocb, oh, ow, lanes = out_shape
    _, icb, kh, kw, ib, _ = kernel_shape
    if stem and not band_rows:
        ob = divisor_at_most(ocb, oc_blocks) if oc_blocks else 1
        t = (divisor_at_most(ow, ow_tile) if ow_tile
             else stem_ow_tile(ow, ob, registers, max_accumulators))
        return 0, ob, t, icb
    if band_rows is None:
        rows = _in_rows(ocb, ow, icb, kh * kw, ib, lanes * itemsize, registers,
                        max_accumulators)
    else:
        rows = band_rows == 0
    if rows:
        ob, t = tile_shape(ocb, ow, registers, max_accumulators, pointwise=(kh, kw) == (1, 1))
        ob = divisor_at_most(ocb, oc_blocks) if oc_blocks else ob
        chunk = icb if (kh, kw) != (1, 1) else (
            divisor_at_most(icb, channel_chunk) if channel_chunk
            else channel_chunk_for(icb, 1, ib))
        return 0, ob, divisor_at_most(ow, ow_tile) if ow_tile else t, chunk
    blocks = divisor_at_most(ocb, oc_blocks) if oc_blocks else None

    def band_of(ob):
        return (divisor_at_most(oh, band_rows) if band_rows
                else band_rows_for(oh, ow, ob, lanes, itemsize))

    ob, t = band_tile_shape(ocb, registers, max_accumulators, blocks)
    if ow_tile is None and band_of(ob) * ow % t:
        ob, t = _even_band_tile((ob, t), ocb, registers, max_accumulators, blocks, band_of,
                                ow) or (ob, t)
    band = band_of(ob)
    chunk = (divisor_at_most(icb, channel_chunk) if channel_chunk
             else channel_chunk_for(icb, kh * kw, ib))
    return band, ob, ow_tile or t, chunk


def _extent(axis) -> int:
    return get_const_tuple((axis.dom.extent,))[0]


def _split_tile(s, anchor, out_op, oc_blocks, ow_tile, unroll_channels,
                parallel_min_macs=PARALLEL_MIN_MACS, channel_chunk=None, weights=None):
    acc, o = accumulator_stages(s, anchor, out_op)
    n, f, y, x, fi = o.op.axis
    fo, fb = o.split(f, factor=oc_blocks)
    xo, xi = o.split(x, factor=ow_tile)
    o.reorder(n, fo, y, xo, fb, xi, fi)
    outer = o.fuse(n, fo, y)
    if weights is not None:     # the next channel blocks' weights, during this block's rows
        o.prefetch(weights, outer, _extent(y))
    if mac_count(anchor) >= parallel_min_macs:
        o.parallel(outer)
    o.unroll(fb)
    o.unroll(xi)
    o.vectorize(fi)
    a = s[acc]
    a.compute_at(o, xo)
    reduce = list(a.op.reduce_axis)
    window = len(reduce) == 4 and _extent(reduce[1]) * _extent(reduce[2]) > 1
    chunked = (len(reduce) == 4 and not window and channel_chunk
               and _extent(reduce[0]) > channel_chunk)
    if window or chunked:
        # a kernel window: each input-channel block (or, with one block, each kernel row)
        # summed from zero, then added, as the band's passes are; a 1x1 kernel: each chunk of
        # `channel_chunk` input-channel blocks
        if chunked:
            split, _ = a.split(reduce[0], factor=channel_chunk)
        else:
            split = reduce[0] if _extent(reduce[0]) > 1 else reduce[1]
        part = s[s.rfactor(acc, split)]
        part.set_scope("local")
        an, af, ay, ax, afi, parts = a.op.axis + a.op.reduce_axis
        a.reorder(an, ay, parts, af, ax, afi)
        a.unroll(af)
        a.unroll(ax)
        a.vectorize(afi)
        part.compute_at(a, parts)
        a = part
        _, an, af, ay, ax, afi = a.op.axis
    else:
        an, af, ay, ax, afi = a.op.axis
    reduce = list(a.op.reduce_axis)
    a.reorder(an, ay, *reduce, af, ax, afi)
    if unroll_channels and len(reduce) >= 3:
        a.unroll(reduce[-1])
    a.unroll(af)
    a.unroll(ax)
    a.vectorize(afi)


def depthwise_band_rows(out_shape, in_shape, kh: int, stride: int, itemsize: int,
                        pad_bytes: int) -> int:
    """Output rows per band of a depthwise convolution: the most (a divisor of the height)
    whose padded input rows ((rows - 1) x stride + kh, the whole padded width of one channel
    block, g times over for an input arranged by groups of g: in_shape [N, C/c, H, W, g, c])
    take at most `pad_bytes`; at least one."""
    _, _, oh, _, lanes = out_shape
    row_bytes = in_shape[3] * lanes * itemsize * (in_shape[4] if len(in_shape) == 6 else 1)
    most = max(1, ((pad_bytes // max(row_bytes, 1)) - kh) // stride + 1)
    return divisor_at_most(oh, most)


def _depthwise_tile(s, anchor, out_op, ow_tile, parallel_min_macs, pad_bytes):
    """Depthwise tiles of one channel block by `ow_tile` columns, over bands of output rows
    (`depthwise_band_rows`) in parallel; a padded input (a pad stage) is padded band by band
    into a buffer of the band's rows that stays in cache (not the whole input at once: one
    pass over memory less)."""
    acc, o = accumulator_stages(s, anchor, out_op)
    n, f, y, x, fi = o.op.axis
    out_shape = get_const_tuple(anchor.output(0).shape)
    pad = next((t for t in anchor.input_tensors if is_kept_input(t.op)), None)
    arranged = pad is not None and "group_input" in pad.op.tag
    in_shape = get_const_tuple(anchor.input_tensors[0].shape)
    kh = get_const_tuple(anchor.input_tensors[1].shape)[2]
    rows = depthwise_band_rows(out_shape, in_shape, kh, max(1, in_shape[2] // out_shape[2]),
                               DType(anchor.output(0).dtype).bytes, pad_bytes)
    yo, yi = o.split(y, factor=rows)
    xo, xi = o.split(x, factor=divisor_at_most(out_shape[3], ow_tile))
    o.reorder(n, f, yo, yi, xo, xi, fi)
    outer = o.fuse(n, f, yo)
    if mac_count(anchor) >= parallel_min_macs:
        o.parallel(outer)
    o.unroll(xi)
    o.vectorize(fi)
    if pad is not None:
        s[pad].compute_at(o, outer)
        s[pad].vectorize(s[pad].op.axis[-1])
        if arranged:                    # the g arrangements unrolled
            s[pad].unroll(s[pad].op.axis[-2])
    a = s[acc]
    a.compute_at(o, xo)
    an, af, ay, ax, afi = a.op.axis
    reduce = list(a.op.reduce_axis)
    a.reorder(an, ay, *reduce, af, ax, afi)
    if len(reduce) == 3 and not arranged:   # groups arranged at each read: unrolled, each
        a.unroll(reduce[2])                 # arrangement is a constant lane pattern
    a.unroll(ax)
    a.vectorize(afi)


def _band_tile(s, anchor, out_op, oc_blocks, ow_tile, band_rows, channel_chunk,
               unroll_channels, parallel):
    acc, o = accumulator_stages(s, anchor, out_op)
    n, f, y, x, fi = o.op.axis
    fo, fb = o.split(f, factor=oc_blocks)
    yo, yi = o.split(y, factor=band_rows)
    o.reorder(n, fo, yo, yi, x, fb, fi)
    outer = o.fuse(n, fo, yo)
    if parallel:
        o.parallel(outer)
    o.vectorize(fi)
    a = s[acc]
    a.compute_at(o, outer)
    blocks = a.op.reduce_axis[0]
    co, _ = a.split(blocks, factor=channel_chunk)
    # Each pass sums its chunk of the reduction from zero (the `.rf` stage, over the band) and
    # only then adds it to the band's accumulators: a running sum over every input channel
    # would round each step at the size of the whole sum.
    part = s[s.rfactor(acc, co)]
    an, af, ay, ax, afi, passes = a.op.axis + a.op.reduce_axis
    a.reorder(an, passes, af, ay, ax, afi)
    a.vectorize(afi)
    part.compute_at(a, passes)
    _, pn, pf, py, px, pfi = part.op.axis
    ci, *window, channels = part.op.reduce_axis
    po, pi = part.split(part.fuse(py, px), factor=ow_tile)
    part.reorder(pn, po, ci, *window, channels, pf, pi, pfi)
    part.pragma(po, "loop_partition", 1)
    # on `ci`: a second pragma on `po` would hide its loop_partition pragma (which must sit
    # right above its loop), leaving the tail's guard in every tile
    part.pragma(ci, "no_strength_reduce", 1)
    if unroll_channels:
        part.unroll(channels)
    else:
        part.pragma(channels, "unroll_disable", 1)
    part.unroll(pf)
    part.unroll(pi)
    part.vectorize(pfi)


def schedule_conv2d_NCHWc(outs, oc_blocks: Optional[int] = None, ow_tile: Optional[int] = None,
                          band_rows: Optional[int] = None, channel_chunk: Optional[int] = None,
                          max_accumulators: Optional[int] = None, unroll_channels: bool = False,
                          depthwise_ow_tile: int = DEPTHWISE_OW_TILE,
                          depthwise_pad_bytes: int = DEPTHWISE_PAD_BYTES,
                          parallel_min_macs: int = PARALLEL_MIN_MACS):
    """Schedule conv2d_NCHWc / depthwise_conv2d_NCHWc and what was fused around it (the pad
    before, bias / scale / residual / activation after). See the module docstring for the
    band and rows tilings.

    band_rows: output rows per band (a divisor of the height is taken); 0: row tiles. None:
        rows for stems (`is_stem`), short reductions and 1x1 convolutions with a small
        `pointwise_tile` (BAND_MIN_STEPS, ROW_WEIGHT_BYTES), else bands of `band_rows_for`
        rows (`conv_tiling` resolves all four choices).
    oc_blocks, ow_tile: the register tile (output-channel blocks, a divisor of the output's
        blocks, x output pixels: any number in a band, a divisor of the width in a row). None:
        `band_tile_shape` / `tile_shape` for the target's ISA (AVX2 bands: 4 x 3; a 1x1
        convolution's rows: 4 x 2); a stem's rows: 1 x `stem_ow_tile` (AVX-512: 1 x 14 at
        width 112).
    channel_chunk: input-channel blocks per pass of a band (a divisor is taken); None:
        `channel_chunk_for` (1 for a 3x3 kernel on 8-channel blocks).
    max_accumulators: a cap on oc_blocks * ow_tile for the automatic choice.
    unroll_channels: unroll the reduction over the channels of an input block (in a band it
        otherwise stays rolled; in a row LLVM decides).
    depthwise_ow_tile: output columns per tile of a depthwise convolution (a divisor of the
        width is taken).
    depthwise_pad_bytes: the most bytes of padded input rows per band of a depthwise
        convolution (`depthwise_band_rows`).
    parallel_min_macs: below this many multiply-adds the (n, block, band or row) loop runs
        serially."""
    registers = vector_isa().registers

    def tile(s, anchor, out_op):
        out = anchor.output(0)
        if anchor.tag == "depthwise_conv2d_NCHWc":
            _depthwise_tile(s, anchor, out_op, depthwise_ow_tile, parallel_min_macs,
                            depthwise_pad_bytes)
            return
        weights = next(t for t in anchor.input_tensors if t.ndim == 6)
        kernel_shape = get_const_tuple(weights.shape)
        out_shape = get_const_tuple(out.shape)
        groups = int(anchor.attrs.get("groups", 1))
        if groups > 1:      # a register tile's channel blocks share one group's input
            out_shape = out_shape[:1] + (out_shape[1] // groups,) + out_shape[2:]
        band, ob, t, chunk = conv_tiling(
            out_shape, kernel_shape, DType(out.dtype).bytes, registers,
            band_rows, oc_blocks, ow_tile, channel_chunk, max_accumulators,
            stem=is_stem(kernel_shape))
        if band == 0:
            _split_tile(s, anchor, out_op, ob, t, unroll_channels, parallel_min_macs, chunk,
                        weights)
        else:
            _band_tile(s, anchor, out_op, ob, t, band, chunk, unroll_channels,
                       mac_count(anchor) >= parallel_min_macs)

    def pad_schedule(s, pad_op):
        if not any(c.op.tag == "depthwise_conv2d_NCHWc" for c in s.consumers(s[pad_op])):
            schedule_pad(s, pad_op)

    return schedule_anchored(as_outputs(outs), lambda t: t in _TAGS, tile, keep_pad=True,
                             pad_schedule=pad_schedule)


schedule_depthwise_conv2d_NCHWc = schedule_conv2d_NCHWc
