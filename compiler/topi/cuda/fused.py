"""schedule_fused(outs): the GPU schedule of a fused group, chosen by the tag of its anchor
(the first non-injective operation reachable from the outputs through injective ones)."""
from __future__ import annotations

from .. import tag
from ..utils import as_outputs, find_anchor
from .batch_matmul import schedule_batch_matmul
from .conv2d import (
    schedule_conv2d_nchw,
    schedule_conv2d_transpose_nchw,
    schedule_depthwise_conv2d_nchw,
    schedule_group_conv2d_nchw,
)
from .dense import schedule_dense
from .injective import schedule_injective
from .pooling import schedule_pool
from .reduction import schedule_reduce
from .softmax import schedule_softmax

SCHEDULE_BY_TAG = {
    "conv2d_nchw": schedule_conv2d_nchw,
    "group_conv2d_nchw": schedule_group_conv2d_nchw,
    "depthwise_conv2d_nchw": schedule_depthwise_conv2d_nchw,
    "conv2d_transpose_nchw": schedule_conv2d_transpose_nchw,
    "dense": schedule_dense,
    "matmul": schedule_dense,
    "batch_matmul": schedule_batch_matmul,
    "matmul_nd": schedule_batch_matmul,
    "pool_max": schedule_pool,
    "pool_sum": schedule_pool,
    "adaptive_pool_max": schedule_pool,
    "adaptive_pool_sum": schedule_pool,
    "softmax_output": schedule_softmax,
    "log_softmax_output": schedule_softmax,
}


def schedule_fused(outs):
    outs = as_outputs(outs)
    anchor = find_anchor(outs, lambda t: not tag.is_injective(t))
    if anchor is None:
        return schedule_injective(outs)
    return SCHEDULE_BY_TAG.get(anchor.tag, schedule_reduce)(outs)
