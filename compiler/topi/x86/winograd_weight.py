"""Schedule of Winograd's weight transform when it runs at load time
(topi.nn.winograd_weight_transform_compute, U[e, o, c, lane]): the kernel runs once per
weight, so it is scheduled for a small, quick-to-compile body rather than for speed — parallel
over the output-channel blocks, the 3 x 3 taps and the a*a points as plain loops, the lanes
vectorized. Unrolling the points and taps (so the coefficient selects fold to constants) runs
it about 5x faster but multiplies its LLVM IR many times over, and LLVM's time with it."""
from __future__ import annotations

from ... import te


def schedule_winograd_weight_transform(outs) -> te.Schedule:
    outs = [outs] if isinstance(outs, te.Tensor) else list(outs)
    s = te.create_schedule([t.op for t in outs])
    u = outs[0]
    point, ob, c, lane = s[u].op.axis
    r, t = s[u].op.reduce_axis
    s[u].reorder(ob, c, point, r, t, lane)
    s[u].vectorize(lane)
    s[u].parallel(ob)
    return s


__all__ = ["schedule_winograd_weight_transform"]
