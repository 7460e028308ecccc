"""Reductions for GPUs (TVM's topi.cuda.schedule_reduce).

A long reduction (REDUCE_CROSS_THREAD elements or more per output) is shared by the threads
of a block: rfactor over the innermost reduce axis split by the block's threads, each thread
summing a strided part into a shared buffer, then one thread combining them:

    for b in outputs:                    # blockIdx.x, one output per block
      for t in threads:  rf[t] = reduce(x[b, ko * T + t] for ko)   # threadIdx.x, shared
      barrier
      if t < 1: out[b] = reduce(rf[0:T])

A short one runs a thread per output, its reduction serial in a register.
"""
from __future__ import annotations

from ... import te
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, get_const_tuple
from .common import bind_flat, const_size, max_threads, thread

# Elements reduced per output from which the threads of a block share the reduction.
REDUCE_CROSS_THREAD = 256
# Threads sharing one reduction.
REDUCE_THREADS = 64


def _reduce_size(op) -> int:
    total = 1
    for iv in op.reduce_axis:
        (ext,) = get_const_tuple((iv.dom.extent,))
        total *= ext if isinstance(ext, int) else 1 << 20
    return total


def cross_thread_reduce(s, op, out_op, nthreads: int = REDUCE_THREADS):
    """The reduction `op` (output `out_op`: itself or an elementwise stage after it) with its
    innermost reduce axis spread over `nthreads` threads of a block (see the module doc)."""
    red = op.output(0)
    k = op.reduce_axis[-1]
    (ext,) = get_const_tuple((k.dom.extent,))
    nthreads = max(1, min(nthreads, ext if isinstance(ext, int) else nthreads, max_threads()))
    _, ki = s[red].split(k, factor=nthreads)
    rf = s.rfactor(red, ki)
    rfs = rf if isinstance(rf, list) else [rf]
    for t in rfs:
        s[t].set_scope("shared")
    out = s[out_op]
    axes = list(out.op.axis)
    fused = out.fuse(*axes) if len(axes) > 1 else axes[0]
    bo, bi = out.split(fused, factor=1)
    out.bind(bo, thread("blockIdx.x"))
    out.bind(bi, thread("threadIdx.x"))
    if out_op is not op:
        s[op].set_scope("local")
        s[op].compute_at(out, bi)
    for t in rfs:
        st = s[t]
        st.compute_at(out, bo)
        st.bind(st.op.axis[0], thread("threadIdx.x"))
    return s


def schedule_reduce_stage(s, op, out_op):
    """`op` (a reduction) computed for the output `out_op` (itself or an injective stage after
    it): across the threads of a block when long, else a thread per output."""
    if op.axis and _reduce_size(op) >= REDUCE_CROSS_THREAD and \
            const_size(op.output(0).shape) <= (1 << 16):
        return cross_thread_reduce(s, op, out_op)
    bound = bind_flat(s, out_op.output(0))
    if out_op is not op and bound is not None:
        s[op].set_scope("local")
        s[op].compute_at(s[out_op], bound[1])
    return s


def schedule_reduce(outs):
    """Every reduction of the group scheduled by schedule_reduce_stage (the output that
    follows it through elementwise stages computing it), injective stages between inlined."""
    outs = as_outputs(outs)
    s = te.create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    seen = set()

    def visit(op, out_op):
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        if tag.is_injective(op.tag):
            if id(op) in outputs:
                reds = [t.op for t in op.input_tensors if isinstance(t.op, ComputeOp) and
                        t.op.reduce_axis and id(t.op) not in outputs]
                if len(reds) == 1 and len(op.input_tensors) == 1:
                    out_op = op   # the reduction computed inside this output
                else:
                    bind_flat(s, op.output(0))
                    out_op = None
            else:
                s[op].compute_inline()
        elif op.reduce_axis:
            schedule_reduce_stage(s, op, out_op if out_op is not None else op)
            out_op = None
        for t in op.input_tensors:
            visit(t.op, out_op)

    for o in outs:
        visit(o.op, None)
    return s


schedule_lrn = schedule_reduce
schedule_layer_norm = schedule_reduce
