"""Target-independent schedules (TVM's `topi.generic`): correct on every CPU target, not tuned.
Each takes `outs` (the output tensors of a possibly fused group) and returns a Schedule in
which the injective stages that are not outputs are inlined; every other stage is computed at
the root in its declared loop order."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs


def default_schedule(outs, auto_inline: bool = True):
    """create_schedule over `outs`; with auto_inline, every injective non-output stage reachable
    from them is inlined (through non-injective stages too)."""
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    if auto_inline:
        outputs = {id(o.op) for o in outs}
        for st in s.stages:
            op = st.op
            if isinstance(op, ComputeOp) and tag.is_injective(op.tag) and id(op) not in outputs:
                st.compute_inline()
    return s


def _make(name: str):
    def schedule(outs, *args, **kwargs):
        return default_schedule(outs)

    schedule.__name__ = name
    schedule.__doc__ = f"{name}(outs): the default schedule, injective stages inlined."
    return schedule


schedule_injective = _make("schedule_injective")
schedule_reduce = _make("schedule_reduce")
schedule_softmax = _make("schedule_softmax")
schedule_pool = _make("schedule_pool")
schedule_adaptive_pool = _make("schedule_adaptive_pool")
schedule_dense = _make("schedule_dense")
schedule_matmul = _make("schedule_matmul")
schedule_batch_matmul = _make("schedule_batch_matmul")
schedule_conv2d_nchw = _make("schedule_conv2d_nchw")
schedule_group_conv2d_nchw = _make("schedule_group_conv2d_nchw")
schedule_depthwise_conv2d_nchw = _make("schedule_depthwise_conv2d_nchw")
schedule_conv2d_transpose_nchw = _make("schedule_conv2d_transpose_nchw")
schedule_lrn = _make("schedule_lrn")
schedule_layer_norm = _make("schedule_layer_norm")
schedule_extern = _make("schedule_extern")
