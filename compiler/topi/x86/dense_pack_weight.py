"""Schedule of a dense weight packed into column panels (topi.nn.dense_pack_weight, out[p, k,
j]) by a kernel of the model: it runs once, after loading, so it is kept simple — the panels in
parallel, each panel's rows of `block` lanes vectorized."""
from __future__ import annotations

from ... import te


def schedule_dense_pack_weight_transform(outs) -> te.Schedule:
    outs = [outs] if isinstance(outs, te.Tensor) else list(outs)
    s = te.create_schedule([t.op for t in outs])
    out = outs[0]
    panel, _, lane = s[out].op.axis
    s[out].vectorize(lane)
    s[out].parallel(panel)
    return s


__all__ = ["schedule_dense_pack_weight_transform"]
