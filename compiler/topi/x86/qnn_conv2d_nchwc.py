"""Schedule of the blocked integer convolution (topi.nn.qnn.qnn_conv2d_NCHWc_int8) for x86.

A register tile holds `oc_blocks` output-channel blocks (one int32 vector of `ob` lanes each) by
`ow_tile` output columns; each step of the reduction (an input-channel group of 4, one kernel
position) loads `oc_blocks` weight vectors (ob x 4 int8) and broadcasts `ow_tile` 4-byte groups
of uint8 input, and multiply-adds them into the accumulators: by vpdpbusd (`qnn_vnni.dot_u8s8`)
where the target has VNNI, else by the portable form (int32 products of the widened bytes,
summed over the group of 4; LLVM vectorizes it over the lanes), which is also what the c target
compiles. The (n, channel-block group, row) loops are fused and run in parallel; the data's
uint8 copy (the shift of int8, the padding) is a stage of its own at the root. What was fused
after the convolution (the bias, requantize, the clamp of a relu) is applied as the tile goes
to the output.
"""
from __future__ import annotations

from typing import Optional

from ...target.isa import vector_isa
from ..utils import as_outputs, divisor_at_most, get_const_tuple, mac_count
from .anchored import accumulator_stages, schedule_anchored
from .conv2d import schedule_pad
from .conv2d_nchwc import PARALLEL_MIN_MACS, tile_shape
from .qnn_vnni import dot_u8s8, vnni_kind

TAG = "conv2d_NCHWc_int8"
# Most int32 accumulators of a register tile. Tiles of 28 (2 x 14, 4 x 7, 1 x 28) ran at 200
# GOP/s against 460 for tiles of 14-16 (2 x 7, 4 x 4) on AVX-512 VNNI (3x3 and 1x1 convs of
# 64-512 channels, 7-56 wide): the broadcasts vpdpbusd takes leave too few registers.
MAX_ACCUMULATORS = 16


def _extent(axis) -> int:
    return get_const_tuple((axis.dom.extent,))[0]


def schedule_qnn_conv2d_NCHWc(outs, target=None, oc_blocks: Optional[int] = None,
                              ow_tile: Optional[int] = None):
    """Schedule qnn_conv2d_NCHWc_int8 and what was fused after it for `target` (a Target or
    None: the current one, else this host): vpdpbusd where `qnn_vnni.vnni_kind(target)` has
    one of the output block's width, else the portable multiply-add. oc_blocks, ow_tile: the
    register tile (divisors are taken); None: `conv2d_nchwc.tile_shape`."""
    kind = vnni_kind(target)
    registers = vector_isa(target).registers

    def tile(s, anchor, out_op):
        _, ocb, _, ow, ob = get_const_tuple(anchor.output(0).shape)
        fb, xt = tile_shape(ocb, ow, registers, max_accumulators=MAX_ACCUMULATORS)
        fb = divisor_at_most(ocb, oc_blocks) if oc_blocks else fb
        xt = divisor_at_most(ow, ow_tile) if ow_tile else xt
        acc, o = accumulator_stages(s, anchor, out_op)
        n, f, y, x, fi = o.op.axis
        fo, fin = o.split(f, factor=fb)
        xo, xi = o.split(x, factor=xt)
        o.reorder(n, fo, y, xo, fin, xi, fi)
        outer = o.fuse(n, fo, y)
        # the next channel blocks' weights, during these blocks' rows (conv2d_nchwc's rows)
        o.prefetch(next(t for t in anchor.input_tensors if t.ndim == 7), outer, _extent(y))
        if mac_count(anchor) >= PARALLEL_MIN_MACS:
            o.parallel(outer)
        o.unroll(fin)
        o.unroll(xi)
        o.vectorize(fi)
        a = s[acc]
        a.compute_at(o, xo)
        an, af, ay, ax, afi = a.op.axis
        rc, ry, rx, rg, rk = a.op.reduce_axis
        # Loops of one iteration around the tensorized stage are marked unrolled: as serial
        # loops they would be dropped before the intrinsic's buffer views are flattened,
        # leaving those views indexed by the dropped loop's variable.
        a.unroll(an)
        a.unroll(ay)
        for r in (rc, ry, rx, rg):
            if _extent(r) == 1:
                a.unroll(r)
        if ow == xt:
            o.unroll(xo)
        if kind is not None and ob in (16, 8, 4) and (kind == "avx512" or ob <= 8):
            a.reorder(an, ay, rc, ry, rx, rg, af, ax, afi, rk)
            a.unroll(af)
            a.unroll(ax)
            a.tensorize(afi, dot_u8s8(ob, kind))
        else:
            a.reorder(an, ay, rc, ry, rx, rg, af, ax, rk, afi)
            a.unroll(af)
            a.unroll(ax)
            a.unroll(rk)
            a.vectorize(afi)

    return schedule_anchored(as_outputs(outs), lambda t: t == TAG, tile, keep_pad=True,
                             pad_schedule=schedule_pad)


__all__ = ["schedule_qnn_conv2d_NCHWc"]
