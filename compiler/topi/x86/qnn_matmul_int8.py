"""Schedule of the packed integer matmul (topi.nn.qnn.qnn_matmul_packed_int8) for x86.

A register tile holds `rows` rows of the output by `col_blocks` column blocks (one int32
vector of `lanes` columns each); each step of the reduction (a group of 4 of K) loads
`col_blocks` weight vectors (lanes x 4 int8, contiguous in the [K/4, N, 4] packing) and
broadcasts `rows` 4-byte groups of uint8 data, and multiply-adds them into the accumulators:
by vpdpbusd (`qnn_vnni.dot_u8s8`) where the target has VNNI, else by the portable form
(int32 products of the widened bytes summed over the group of 4, vectorized over the lanes),
which is also what the c target compiles. The loops run column tiles outside, row tiles
inside (a column tile's weights stay in cache while the rows pass), both fused and in
parallel for a large enough product. The data's uint8 copy (the shift of int8, K padded to 4)
is a stage of its own at the root. What was fused after the matmul (the zero-point
correction, bias, requantize, the clamp of a relu) is applied as the tile goes to the output.
"""
from __future__ import annotations

from typing import Optional

from ...target.isa import vector_isa
from ..utils import as_outputs, divisor_at_most, get_const_tuple, mac_count
from .anchored import accumulator_stages, schedule_anchored
from .conv2d import schedule_pad
from .conv2d_nchwc import PARALLEL_MIN_MACS
from .qnn_vnni import dot_u8s8, vnni_kind, vnni_lanes

TAG = "matmul_int8"
# Rows of a register tile, and the register budget its accumulators may take.
TILE_ROWS = 4
ACC_REGISTERS = 16


def column_lanes(n: int, kind: Optional[str]) -> int:
    """The int32 lanes of one column block of an N-column product: the widest of the target's
    vpdpbusd widths (16, 8, 4 without VNNI) dividing N, else 1."""
    return next((b for b in (vnni_lanes(kind) or (16, 8, 4)) if n % b == 0), 1)


def schedule_qnn_matmul_int8(outs, target=None, rows: Optional[int] = None,
                             col_blocks: Optional[int] = None):
    """Schedule qnn_matmul_packed_int8 and what was fused after it for `target` (a Target or
    None: the current one, else this host): vpdpbusd where `qnn_vnni.vnni_kind(target)` has a
    width dividing N, else the portable multiply-add. rows, col_blocks: the register tile
    (divisors of M and of N / lanes are taken); None: TILE_ROWS rows and as many column
    blocks as ACC_REGISTERS leaves."""
    kind = vnni_kind(target)
    registers = vector_isa(target).registers

    def tile(s, anchor, out_op):
        shape = get_const_tuple(anchor.output(0).shape)
        m, n = shape[-2], shape[-1]
        lanes = column_lanes(n, kind)
        rt = divisor_at_most(m, rows or TILE_ROWS)
        budget = max(1, min(ACC_REGISTERS, registers // 2) // rt)
        cb = divisor_at_most(n // lanes, col_blocks or budget)
        acc, o = accumulator_stages(s, anchor, out_op)
        axes = list(o.op.axis)
        lead, my, nx = axes[:-2], axes[-2], axes[-1]
        mo, mi = o.split(my, factor=rt)
        no, ni = o.split(nx, factor=cb * lanes)
        nb, nl = o.split(ni, factor=lanes)
        o.reorder(no, *lead, mo, mi, nb, nl)
        outer = o.fuse(no, *lead, mo)
        tiles = (n // (cb * lanes)) * (m // rt)
        for d in shape[:-2]:
            tiles *= d
        if tiles == 1:
            o.unroll(outer)     # a loop of one iteration (see below)
        elif mac_count(anchor) >= PARALLEL_MIN_MACS:
            o.parallel(outer)
        o.unroll(mi)
        o.unroll(nb)
        o.vectorize(nl)
        a = s[acc]
        a.compute_at(o, outer)
        a_axes = list(a.op.axis)
        a_lead, am, an = a_axes[:-2], a_axes[-2], a_axes[-1]
        rg, rk = a.op.reduce_axis
        af, afi = a.split(an, factor=lanes)
        # Loops of one iteration around the tensorized stage are marked unrolled (see
        # qnn_conv2d_nchwc).
        for ax in a_lead:
            a.unroll(ax)
        if kind is not None and lanes in vnni_lanes(kind):
            a.reorder(*a_lead, rg, am, af, afi, rk)
            a.unroll(am)
            a.unroll(af)
            a.tensorize(afi, dot_u8s8(lanes, kind))
        else:
            a.reorder(*a_lead, rg, am, af, rk, afi)
            a.unroll(am)
            a.unroll(af)
            a.unroll(rk)
            a.vectorize(afi)

    return schedule_anchored(as_outputs(outs), lambda t: t == TAG, tile, keep_pad=True,
                             pad_schedule=schedule_pad)


__all__ = ["column_lanes", "schedule_qnn_matmul_int8"]
