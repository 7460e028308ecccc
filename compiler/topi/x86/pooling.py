"""Pooling for x86: the output's (n, c, y) loops fused and in parallel, the pool's window
reduction computed per output row inside that loop. In the blocked layout NCHW[x]c the
channels of a block (the last axis) are vectorized, in the anchor and the output alike."""
from __future__ import annotations

from ..utils import as_outputs, get_const_tuple, mac_count
from .anchored import schedule_anchored

# Below this many window elements read (output size x window) a blocked pool runs serially.
PARALLEL_MIN_ELEMENTS = 1 << 16
# A blocked sum pool over a window of at least this many elements sums it by rows
# (`_sum_by_rows`).
ROWS_SUM_MIN = 32


def _is_pool(t: str) -> bool:
    return t in ("pool_max", "pool_sum", "adaptive_pool_max", "adaptive_pool_sum")


def _sum_by_rows(s, anchor):
    """The stage that runs the window loops of a sum pool computed at an output pixel: its own,
    or for a window of at least ROWS_SUM_MIN elements, a local stage summing each window row
    from zero, the rows then added (a global average pool of 13 x 13 pixels, one running sum:
    errors of 3-4 ulp in the mean; by rows, ONNX Runtime's 1)."""
    a = s[anchor]
    rows = list(a.op.reduce_axis)
    if anchor.tag not in ("pool_sum", "adaptive_pool_sum") or len(rows) != 2:
        return a
    extents = get_const_tuple(tuple(r.dom.extent for r in rows))
    if not all(isinstance(e, int) for e in extents) or extents[0] < 2 or \
            extents[0] * extents[1] < ROWS_SUM_MIN:
        return a
    part = s[s.rfactor(anchor.output(0), rows[0])]
    part.set_scope("local")
    a.reorder(*a.op.reduce_axis, a.op.axis[-1])
    a.vectorize(a.op.axis[-1])
    part.compute_at(a, a.op.reduce_axis[0])
    return part


def _tile(s, anchor, out_op):
    stage = s[out_op]
    axes = list(stage.op.axis)
    if len(axes) == 5:
        n, cb, y, x, c = axes
        outer = stage.fuse(n, cb, y)
        if mac_count(anchor) >= PARALLEL_MIN_ELEMENTS:
            stage.parallel(outer)
        if out_op is anchor:
            stage.reorder(outer, x, *stage.op.reduce_axis, c)
        stage.vectorize(c)
        if out_op is not anchor:
            a = s[anchor]
            a.compute_at(stage, x)
            a = _sum_by_rows(s, anchor)
            a.reorder(*a.op.reduce_axis, a.op.axis[-1])
            a.vectorize(a.op.axis[-1])
        return
    outer = stage.fuse(*axes[:-1]) if len(axes) > 2 else axes[0]
    stage.parallel(outer)
    if out_op is not anchor:
        s[anchor].compute_at(stage, outer)


def schedule_pool(outs, layout="NCHW"):
    """Schedule max / avg pool2d, NCHW or NCHW[x]c (and what was fused after it)."""
    return schedule_anchored(as_outputs(outs), _is_pool, _tile)


def schedule_adaptive_pool(outs):
    """Schedule adaptive / global pooling (and what was fused after it)."""
    return schedule_anchored(as_outputs(outs), _is_pool, _tile)
