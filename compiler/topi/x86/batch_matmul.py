"""batch_matmul for x86: static rows and columns get the register tile of the packed GEMM in
each batch (gemm.tile_gemm); otherwise (batch, row) fused and in parallel, the columns
vectorized. Either way the columns are contiguous when the second operand is not transposed."""
from __future__ import annotations

from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import accumulator_stages, schedule_anchored
from .gemm import tile_gemm

BATCH_MATMUL_COLS = 16


def _tile(s, anchor, out_op):
    """Static rows and columns: the register tile of the packed GEMM (gemm.tile_gemm) in
    every batch, the batch axes fused with the parallel blocks. Otherwise (symbolic sizes):
    the batch axes and the rows fused in parallel, a strip of columns accumulated in
    registers over the whole reduction."""
    m, n = get_const_tuple(anchor.output(0).shape)[-2:]
    if isinstance(m, int) and isinstance(n, int):
        tile_gemm(s, anchor, out_op)
        return
    cols = divisor_at_most(n, BATCH_MATMUL_COLS)
    acc, o = accumulator_stages(s, anchor, out_op)
    *outer, j = o.op.axis
    jo, ji = o.split(j, factor=cols)
    o.reorder(*outer, jo, ji)
    o.parallel(o.fuse(*outer))
    o.vectorize(ji)
    a = s[acc]
    a.compute_at(o, jo)
    *a_outer, aj = a.op.axis
    a.reorder(*a_outer, *a.op.reduce_axis, aj)
    a.vectorize(aj)


def schedule_batch_matmul(outs):
    """Schedule batch_matmul, or a matmul with any number of broadcast batch axes (tag
    "matmul_nd"), and what was fused after it."""
    return schedule_anchored(as_outputs(outs), lambda t: t in ("batch_matmul", "matmul_nd"),
                             _tile)
