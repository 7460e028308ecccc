"""What the GPU schedules share: the thread budget of the current target, binding a stage's
loops to blocks and threads, the local accumulator of an anchor, cooperative fetching of a
shared tile, and the shape of a fused group around an anchor (after x86/anchored.py, with
blocks and threads for the parallel loops)."""
from __future__ import annotations

from typing import Callable, List, Sequence

from ... import te
from ...target import Target
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, find_anchor, get_const_tuple
from ..x86.anchored import anchor_producers, inline_epilogue
from ..x86.injective import inline_injective_producers

# Threads per block when the current target does not say (TVM's OpenCL/Metal default).
DEFAULT_MAX_THREADS = 256


def max_threads() -> int:
    """max_num_threads of the current GPU target (`with Target("cuda"):`), else the default."""
    tgt = Target.current()
    if tgt is not None and not tgt.kind.is_host:
        n = tgt.get("max_num_threads")
        if n:
            return int(n)
    return DEFAULT_MAX_THREADS


def const_size(shape) -> int:
    """The number of elements of a static shape (0-d: 1); symbolic dims count as 1 << 20."""
    total = 1
    for d in get_const_tuple(shape):
        total *= d if isinstance(d, int) else 1 << 20
    return total


def thread(tag_name: str):
    return te.thread_axis(tag_name)


def bind_flat(s, out, nthreads: int = 0):
    """Fuse the data axes of `out`'s stage, split by the thread count, bind the parts to
    blockIdx.x / threadIdx.x. Returns (bx, tx), or None for a 0-d stage (nothing to bind)."""
    stage = s[out]
    axes = list(stage.op.axis)
    if not axes:
        return None
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    n = nthreads or max_threads()
    size = const_size(out.shape if hasattr(out, "shape") else out.output(0).shape)
    n = max(1, min(n, size))
    bx, tx = stage.split(fused, factor=n)
    stage.bind(bx, thread("blockIdx.x"))
    stage.bind(tx, thread("threadIdx.x"))
    return bx, tx


def local_accumulator(s, anchor, out_op):
    """The stage that accumulates `anchor` in registers, and the stage that writes the group's
    output: (local tensor, output op). With no epilogue (`out_op is anchor`) the anchor gets a
    local cache_write; else the anchor itself becomes local, computed inside the output."""
    if out_op is anchor:
        local = s.cache_write(anchor.output(0), "local")
        return local, anchor
    s[anchor].set_scope("local")
    return anchor.output(0), out_op


def thread_per_output(s, anchor, out_op):
    """Each thread computes one element of the output, the anchor's value for it in a
    register (its reduction serial)."""
    bound = bind_flat(s, out_op.output(0))
    if out_op is not anchor and bound is not None:
        s[anchor].set_scope("local")
        s[anchor].compute_at(s[out_op], bound[1])


def cooperative_fetch(s, shared, threads: Sequence[tuple]):
    """The loops of the shared tile `shared` fused and spread over the block's threads:
    `threads` = [(tag, extent), ...] innermost last; the remainder loops serially."""
    stage = s[shared]
    axes = list(stage.op.axis)
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    parts = []
    for tg, ext in reversed(list(threads)):
        fused, inner = stage.split(fused, factor=ext)
        parts.append((inner, tg))
    for inner, tg in parts:
        stage.bind(inner, thread(tg))


def schedule_injective_from_existing(s, out):
    """Bind `out`'s loops flat over blocks and threads; returns s."""
    bind_flat(s, out)
    return s


def schedule_anchored(outs, is_anchor: Callable[[str], bool], tile: Callable):
    """A GPU schedule of `outs` around the anchor that `is_anchor(tag)` picks: its injective
    producers and the elementwise stages after it inlined, `tile(s, anchor, O)` laying out the
    output stage O (the anchor, or the output that follows it); other outputs flat."""
    outs = as_outputs(outs)
    s = te.create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    anchor = find_anchor(outs, is_anchor)
    if anchor is None:
        for o in outs:
            inline_injective_producers(s, o.op, outputs)
            bind_flat(s, o)
        return s
    for o in outs:
        inline_epilogue(s, o.op, anchor, outputs)
    anchor_producers(s, anchor, outputs, keep_pad=False)
    main = anchor if id(anchor) in outputs else outs[0].op
    tile(s, anchor, main)
    for o in outs:
        if o.op is not main and o.op is not anchor:
            bind_flat(s, o)
    return s


def root_computes(s) -> List[ComputeOp]:
    """The compute stages at the root (each becomes a kernel of its own)."""
    return [st.op for st in s.stages if isinstance(st.op, ComputeOp) and
            st.attach_type == "root"]


def is_injective(op) -> bool:
    return isinstance(op, ComputeOp) and tag.is_injective(op.tag)


def const_axes_size(axes) -> int:
    """The number of iterations of the loops `axes` (symbolic extents count as 1 << 20)."""
    return const_size([iv.dom.extent for iv in axes])
