"""batch_matmul for GPUs: a thread per output element (its reduction in a register), the
elementwise stages after it in the same kernel."""
from __future__ import annotations

from ..utils import as_outputs
from .common import schedule_anchored, thread_per_output


def schedule_batch_matmul(outs):
    return schedule_anchored(as_outputs(outs), lambda t: t in ("batch_matmul", "matmul_nd"),
                             thread_per_output)
