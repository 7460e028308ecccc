"""Pooling for GPUs (TVM's topi.cuda.schedule_pool / schedule_adaptive_pool): a thread per
output element, its window reduced in a register, the elementwise stages after the pool
(an average's division, an activation) in the same kernel."""
from __future__ import annotations

from ..utils import as_outputs
from .common import schedule_anchored, thread_per_output


def _is_pool(t: str) -> bool:
    return t in ("pool_max", "pool_sum", "adaptive_pool_max", "adaptive_pool_sum")


def schedule_pool(outs, layout="NCHW"):
    del layout
    return schedule_anchored(as_outputs(outs), _is_pool, thread_per_output)


def schedule_adaptive_pool(outs):
    return schedule_anchored(as_outputs(outs), _is_pool, thread_per_output)


schedule_pool_grad = schedule_pool
