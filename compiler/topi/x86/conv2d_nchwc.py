"""Convolutions in the blocked layout NCHW[x]c for x86 (and any CPU): conv2d_NCHWc (any
kernel size, stride, 1x1 included) and depthwise_conv2d_NCHWc.

The micro-kernel: a register tile of `oc_blocks` output-channel blocks (each one vector of the
block's lanes) by `ow_tile` output columns, i.e. oc_blocks * ow_tile vector accumulators,
held in a local buffer while the reduction runs over the input-channel blocks, the kernel
window and the channels of a block (outermost to innermost); each step loads `oc_blocks`
weight vectors and broadcasts `ow_tile` input values. The tile then goes to the output through
what was fused after the convolution (bias, scale/shift, a residual add, relu/clip), so the
epilogue costs no pass over memory. The (n, channel-block group, row) loops are fused and run
in parallel. Padding is a stage of its own computed once at the root (in parallel), so the
inner loops read the padded input without guards; `ow_tile` divides the output width, so
there is no column tail either.

Tunables (keyword arguments of `schedule_conv2d_NCHWc`, defaults from the module constants and
the target's vector ISA): oc_blocks, ow_tile, max_accumulators, unroll_channels,
depthwise_ow_tile, parallel_min_macs.
"""
from __future__ import annotations

from typing import Optional

from ...target.isa import vector_isa
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import schedule_anchored
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
# Depthwise: output columns per tile (each a vector of the channel block).
DEPTHWISE_OW_TILE = 8
# Below this many multiply-adds a convolution runs serially (a parallel launch costs more).
PARALLEL_MIN_MACS = 1 << 19

_TAGS = ("conv2d_NCHWc", "depthwise_conv2d_NCHWc")


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
        best = None
        for ob in range(2, min(ocb, MAX_OC_BLOCKS) + 1):
            for t in range(2, min(ow, MAX_OW_TILE) + 1):
                if ocb % ob or ow % t or ob * t > registers // 2 or ob * t + ob + 1 > registers:
                    continue
                if best is None or (ob, t) > best:
                    best = (ob, t)
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


def _macs(anchor) -> int:
    total = 1
    for d in get_const_tuple(anchor.output(0).shape):
        total *= d
    for r in anchor.reduce_axis:
        total *= get_const_tuple((r.dom.extent,))[0]
    return total


def _split_tile(s, anchor, out_op, oc_blocks, ow_tile, unroll_channels,
                parallel_min_macs=PARALLEL_MIN_MACS):
    if out_op is anchor:
        acc = s.cache_write(anchor.output(0), "local")
        o = s[anchor]
    else:
        acc = anchor.output(0)
        o = s[out_op]
    n, f, y, x, fi = o.op.axis
    fo, fb = o.split(f, factor=oc_blocks)
    xo, xi = o.split(x, factor=ow_tile)
    o.reorder(n, fo, y, xo, fb, xi, fi)
    outer = o.fuse(n, fo, y)
    if _macs(anchor) >= parallel_min_macs:
        o.parallel(outer)
    o.unroll(fb)
    o.unroll(xi)
    o.vectorize(fi)
    a = s[acc]
    a.compute_at(o, xo)
    an, af, ay, ax, afi = a.op.axis
    reduce = list(a.op.reduce_axis)
    a.reorder(an, ay, *reduce, af, ax, afi)
    if unroll_channels and len(reduce) == 4:
        a.unroll(reduce[-1])
    a.unroll(af)
    a.unroll(ax)
    a.vectorize(afi)


def schedule_conv2d_NCHWc(outs, oc_blocks: Optional[int] = None, ow_tile: Optional[int] = None,
                          max_accumulators: Optional[int] = None, unroll_channels: bool = False,
                          depthwise_ow_tile: int = DEPTHWISE_OW_TILE,
                          parallel_min_macs: int = PARALLEL_MIN_MACS):
    """Schedule conv2d_NCHWc / depthwise_conv2d_NCHWc and what was fused around it (the pad
    before, bias / scale / residual / activation after).

    oc_blocks, ow_tile: the register tile (output-channel blocks x output columns; divisors of
        the output's channel blocks and width). None: `tile_shape` for the target's ISA
        (AVX2: 2 x 4 at widths 56 and 28, 4 x 2 at 14, 1 x 7 at 7; a 1x1 convolution 4 x 2).
    max_accumulators: a cap on oc_blocks * ow_tile for the automatic choice.
    unroll_channels: unroll the reduction over the channels of an input block too.
    depthwise_ow_tile: output columns per tile of a depthwise convolution (a divisor of the
        width is taken).
    parallel_min_macs: below this many multiply-adds the (n, block, row) loop runs serially."""
    registers = vector_isa().registers

    def tile(s, anchor, out_op):
        _, ocb, _, ow, _ = get_const_tuple(anchor.output(0).shape)
        if anchor.tag == "depthwise_conv2d_NCHWc":
            _split_tile(s, anchor, out_op, 1, divisor_at_most(ow, depthwise_ow_tile), False,
                        parallel_min_macs)
            return
        kernel = next(t for t in anchor.input_tensors if t.ndim == 6)
        kh, kw = get_const_tuple(kernel.shape)[2:4]
        ob, t = tile_shape(ocb, ow, registers, max_accumulators, pointwise=(kh, kw) == (1, 1))
        ob = divisor_at_most(ocb, oc_blocks) if oc_blocks else ob
        t = divisor_at_most(ow, ow_tile) if ow_tile else t
        _split_tile(s, anchor, out_op, ob, t, unroll_channels, parallel_min_macs)

    return schedule_anchored(as_outputs(outs), lambda t: t in _TAGS, tile, keep_pad=True,
                             pad_schedule=schedule_pad)


schedule_depthwise_conv2d_NCHWc = schedule_conv2d_NCHWc
