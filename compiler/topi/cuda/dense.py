"""dense / matmul for GPUs (TVM's topi.cuda.schedule_dense_small_batch, schedule_dense).

Small batch (fewer than SMALL_BATCH rows): each output element is a block whose threads share
its reduction (reduction.cross_thread_reduce). Otherwise the tiled schedule: a block computes a
BM x BN tile of the output with (BM / TM) x (BN / TN) threads, each accumulating a TM x TN
register tile; per step of BK along the reduction the block loads the A and W tiles it needs
into shared memory together (every thread a part), waits, and multiplies from there. All tile
sizes divide the matrix sizes (divisors at most the constants below), so no thread is idle at
a barrier.
"""
from __future__ import annotations

from ... import te
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .common import cooperative_fetch, local_accumulator, max_threads, schedule_anchored, thread
from .reduction import cross_thread_reduce

SMALL_BATCH = 16
BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 16   # the block's output tile and reduction step
THREAD_M, THREAD_N = 4, 4                # a thread's register tile


def _is_dense(t: str) -> bool:
    return t in ("dense", "matmul")


def tiled_gemm(s, anchor, out_op):
    """The tiled shared-memory schedule of the 2-d reduction `anchor` whose result `out_op`
    writes (the anchor itself, or an elementwise stage after it)."""
    m, n = get_const_tuple(anchor.output(0).shape)
    local, out_op = local_accumulator(s, anchor, out_op)
    bm, bn = divisor_at_most(m, BLOCK_M), divisor_at_most(n, BLOCK_N)
    tm, tn = divisor_at_most(bm, THREAD_M), divisor_at_most(bn, THREAD_N)
    while (bm // tm) * (bn // tn) > max_threads():
        tm, tn = (tm * 2, tn) if bm % (tm * 2) == 0 and tm <= tn else (tm, tn * 2)
    ty, tx = bm // tm, bn // tn
    o = s[out_op]
    i, j = o.op.axis
    io, ii = o.split(i, factor=bm)
    jo, ji = o.split(j, factor=bn)
    iy, iin = o.split(ii, factor=tm)
    jx, jin = o.split(ji, factor=tn)
    o.reorder(io, jo, iy, jx, iin, jin)
    o.bind(io, thread("blockIdx.y"))
    o.bind(jo, thread("blockIdx.x"))
    o.bind(iy, thread("threadIdx.y"))
    o.bind(jx, thread("threadIdx.x"))
    cl = s[local]
    cl.compute_at(o, jx)
    (k,) = cl.op.reduce_axis
    (kext,) = get_const_tuple((k.dom.extent,))
    ko, ki = cl.split(k, factor=divisor_at_most(kext, BLOCK_K))
    li, lj = cl.op.axis
    cl.reorder(ko, ki, li, lj)
    cl.unroll(li)
    cl.unroll(lj)
    for t in list(local.op.input_tensors):
        shared = s.cache_read(t, "shared", [local])
        s[shared].compute_at(cl, ko)
        cooperative_fetch(s, shared, [("threadIdx.y", ty), ("threadIdx.x", tx)])
    return s


def _small_batch(s, anchor, out_op):
    cross_thread_reduce(s, anchor, out_op)


def _tile(s, anchor, out_op):
    m, _ = get_const_tuple(anchor.output(0).shape)
    if isinstance(m, int) and m < SMALL_BATCH:
        return _small_batch(s, anchor, out_op)
    return tiled_gemm(s, anchor, out_op)


def schedule_dense_small_batch(outs):
    return schedule_anchored(as_outputs(outs), _is_dense, _small_batch)


def schedule_dense_large_batch(outs):
    return schedule_anchored(as_outputs(outs), _is_dense, tiled_gemm)


def schedule_dense(outs):
    """dense (and matmul): small batch or tiled by the number of rows."""
    return schedule_anchored(as_outputs(outs), _is_dense, _tile)


schedule_matmul = schedule_dense
_ = te
