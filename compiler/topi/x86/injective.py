"""Injective schedules for x86 (and any CPU): outer axes fused and run in parallel (as few as
give PARALLEL_MIN_CHUNKS iterations, the others nested inside), the innermost axis split by a
vector width and vectorized."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp
from ...tir import expr as E
from .. import tag
from ..utils import as_outputs, divisor_at_most, get_const_tuple

# Lanes of the innermost vectorized loop (float32: two AVX2 registers).
VECTOR_LANES = 16
# Below this many elements an injective output runs serially (a parallel launch costs more).
PARALLEL_MIN_ELEMENTS = 1 << 14
# The parallel loop fuses outer axes until it has this many iterations (the rest stay nested).
PARALLEL_MIN_CHUNKS = 64


def static_size(shape):
    """The element count of a static shape, else None."""
    total = 1
    for s in get_const_tuple(shape):
        if not isinstance(s, int):
            return None
        total *= s
    return total


def schedule_injective_from_existing(s, out):
    """Lay out the loops of the output tensor `out` in `s` (its producers untouched): fuse
    the outer axes into a parallel loop (`_parallel_axes`; a small output runs serially),
    vectorize the last by up to VECTOR_LANES lanes (a divisor of its extent, so no tail)."""
    stage = s[out]
    axes = list(stage.op.axis)
    if not axes:
        return s
    size = static_size(out.shape)
    extents = [get_const_tuple((ax.dom.extent,))[0] for ax in axes]
    last = axes[-1]
    inner = None
    if isinstance(extents[-1], int) and extents[-1] >= 2:
        lanes = divisor_at_most(extents[-1], VECTOR_LANES)
        if lanes >= 2:
            outer_last, inner = stage.split(last, factor=lanes) if lanes < extents[-1] \
                else (None, last)
            axes = axes[:-1] + ([outer_last] if outer_last is not None else [])
            extents = extents[:-1] + ([extents[-1] // lanes] if outer_last is not None else [])
    if axes and (size is None or size >= PARALLEL_MIN_ELEMENTS):
        outer = _parallel_axes(axes, extents)
        fused = stage.fuse(*outer) if len(outer) > 1 else outer[0]
        stage.parallel(fused)
    if inner is not None:
        stage.vectorize(inner)
    return s


def _parallel_axes(axes, extents):
    """The outer `axes` (of `extents`, None where not static) to fuse into the parallel loop:
    from the outermost, until they give PARALLEL_MIN_CHUNKS iterations (all of them where an
    extent is not static). The axes inside stay loops of their own, so an index computed from
    the fused loop is computed once per iteration of it, not once per element."""
    count = 1
    for k, extent in enumerate(extents):
        if not isinstance(extent, int):
            return axes
        count *= extent
        if count >= PARALLEL_MIN_CHUNKS:
            return axes[:k + 1]
    return axes


def inline_injective_producers(s, op, outputs):
    """Inline every injective, non-output compute that `op` reads, transitively through
    injective ones."""
    for t in op.input_tensors:
        p = t.op
        if isinstance(p, ComputeOp) and tag.is_injective(p.tag) and id(p) not in outputs:
            if s[p].attach_type != "inline":
                s[p].compute_inline()
                inline_injective_producers(s, p, outputs)


def schedule_injective(outs):
    """Schedule a group of injective operators: intermediates inlined, each output laid out by
    schedule_injective_from_existing."""
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    for o in outs:
        inline_injective_producers(s, o.op, outputs)
        schedule_injective_from_existing(s, o)
    return s


def is_const_extent(iv) -> bool:
    return isinstance(E.convert(iv.dom.extent), E.IntImm)
