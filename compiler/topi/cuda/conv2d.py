"""Convolutions (NCHW) for GPUs (TVM's topi.cuda.schedule_conv2d_nchw and
schedule_depthwise_conv2d_nchw).

conv2d, direct: a block computes BF output channels x BY x BX output pixels of one image
with (BF / TF) x BY x BX threads, each accumulating TF channels of one pixel in registers.
Per step of RC input channels, the block loads the input window and the kernel slice it
needs into shared memory together, waits, and accumulates from there. The tile sizes divide
the output sizes, so every thread reaches every barrier.

depthwise (and grouped, and transposed) convolution: a thread per output element, its
(small) reduction serial in a register; the elementwise stages after it in the same kernel.
"""
from __future__ import annotations

from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .common import (
    cooperative_fetch,
    local_accumulator,
    schedule_anchored,
    thread,
    thread_per_output,
)

BLOCK_F, THREAD_F = 16, 4     # output channels per block, per thread
BLOCK_Y, BLOCK_X = 8, 8       # output pixels per block (a thread each)
STEP_RC = 8                   # input channels per shared-memory step


def direct_conv2d(s, anchor, out_op):
    """The shared-memory direct schedule of the conv2d `anchor` (see the module doc)."""
    n, f, oh, ow = get_const_tuple(anchor.output(0).shape)
    local, out_op = local_accumulator(s, anchor, out_op)
    bf = divisor_at_most(f, BLOCK_F)
    # the fewest channels per thread that keep the block's channel threads <= BLOCK_F / THREAD_F
    # (a prime block of 11 channels is one thread's 11, not 11 threads of one)
    tf = min(d for d in range(1, bf + 1) if bf % d == 0 and bf // d <= BLOCK_F // THREAD_F)
    by, bx = divisor_at_most(oh, BLOCK_Y), divisor_at_most(ow, BLOCK_X)
    tz = bf // tf
    o = s[out_op]
    on, of, oy, ox = o.op.axis
    fo, fi = o.split(of, factor=bf)
    fz, fin = o.split(fi, factor=tf)
    yo, yi = o.split(oy, factor=by)
    xo, xi = o.split(ox, factor=bx)
    o.reorder(on, fo, yo, xo, fz, yi, xi, fin)
    o.bind(o.fuse(on, fo), thread("blockIdx.z"))
    o.bind(yo, thread("blockIdx.y"))
    o.bind(xo, thread("blockIdx.x"))
    o.bind(fz, thread("threadIdx.z"))
    o.bind(yi, thread("threadIdx.y"))
    o.bind(xi, thread("threadIdx.x"))
    cl = s[local]
    cl.compute_at(o, xi)
    rc, ry, rx = cl.op.reduce_axis
    (c,) = get_const_tuple((rc.dom.extent,))
    rco, rci = cl.split(rc, factor=divisor_at_most(c, STEP_RC))
    ln, lf, ly, lx = cl.op.axis
    cl.reorder(rco, rci, ry, rx, ln, lf, ly, lx)
    threads = [("threadIdx.z", tz), ("threadIdx.y", by), ("threadIdx.x", bx)]
    for t in list(local.op.input_tensors):
        shared = s.cache_read(t, "shared", [local])
        s[shared].compute_at(cl, rco)
        cooperative_fetch(s, shared, threads)
    return s


def _is_conv(t: str) -> bool:
    return t == "conv2d_nchw"


def schedule_conv2d_nchw(outs):
    return schedule_anchored(as_outputs(outs), _is_conv, direct_conv2d)


def schedule_depthwise_conv2d_nchw(outs):
    return schedule_anchored(as_outputs(outs), lambda t: t == "depthwise_conv2d_nchw",
                             thread_per_output)


def schedule_group_conv2d_nchw(outs):
    return schedule_anchored(as_outputs(outs),
                             lambda t: t in ("group_conv2d_nchw", "depthwise_conv2d_nchw",
                                             "conv2d_nchw"), thread_per_output)


def schedule_conv2d_transpose_nchw(outs):
    return schedule_anchored(as_outputs(outs), lambda t: t == "conv2d_transpose_nchw",
                             thread_per_output)
