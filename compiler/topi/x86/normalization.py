"""layer_norm for x86: the rows (the axes kept) fused and run in parallel, each row's sum and
sum of squares computed at the row in vector lanes (rfactor over the innermost reduced axis
split by the vector width, the lanes added once at the end), the normalised row vectorized.
A layer norm over axes that are not the innermost ones gets schedule_reduce."""
from __future__ import annotations

from ...te import create_schedule
from ...te.tensor import ComputeOp, TensorLoad
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .injective import VECTOR_LANES, inline_injective_producers, static_size
from .reduction import schedule_reduce

# Lanes of the partial sums of a row (float32: one AVX2 register).
REDUCE_LANES = 8
# Below this many elements the rows run serially (a parallel launch costs more).
PARALLEL_MIN_ELEMENTS = 1 << 13


def _lanes(extent, most: int) -> int:
    """The vector width for a loop of `extent`: its largest divisor up to `most`, or `most`
    itself where that divisor is under half of it and the loop is longer (a row of 197: 16
    lanes, the 5 left over in a tail that `loop_partition` splits off); 1: no vectors."""
    if not isinstance(extent, int):
        return 1
    lanes = divisor_at_most(extent, most)
    return most if lanes < most // 2 and extent > most else lanes


def _split_vector(stage, axis, lanes: int):
    """(outer, inner) of `axis` split by `lanes`, the outer loop partitioned where the split
    leaves a tail (a guard-free main loop)."""
    outer, inner = stage.split(axis, factor=lanes)
    (extent,) = get_const_tuple((axis.dom.extent,))
    if extent % lanes:
        stage.pragma(outer, "loop_partition", 1)
    return outer, inner


def vectorize_innermost(stage) -> None:
    """The stage's innermost data axis split by up to VECTOR_LANES (see `_lanes`) and
    vectorized."""
    last = stage.op.axis[-1]
    lanes = _lanes(get_const_tuple((last.dom.extent,))[0], VECTOR_LANES)
    if lanes >= 2:
        _, inner = _split_vector(stage, last, lanes)
        stage.vectorize(inner)


def vector_reduce(s, red, row_stage, row_axis) -> None:
    """`red` (a reduction over one axis, any commutative reducer) computed at `row_axis` of
    `row_stage`, accumulated in REDUCE_LANES partial results, vectorized."""
    (k,) = red.op.reduce_axis
    lanes = _lanes(get_const_tuple((k.dom.extent,))[0], REDUCE_LANES)
    s[red].compute_at(row_stage, row_axis)
    if lanes < 2:
        return
    ko, ki = s[red].split(k, factor=lanes)
    rf = s.rfactor(red, ki, factor_axis=-1)
    s[rf].compute_at(row_stage, row_axis)
    *_, lane = s[rf].op.axis
    (ko_rf,) = s[rf].op.reduce_axis
    s[rf].reorder(ko_rf, lane)
    if get_const_tuple((k.dom.extent,))[0] % lanes:
        s[rf].pragma(ko_rf, "loop_partition", 1)
    s[rf].vectorize(lane)


def _over_last_axis(total: ComputeOp) -> bool:
    """Whether the row sum reduces the innermost axis of the data it reads (one reduce axis)."""
    body = total.body[0] if isinstance(total.body, (tuple, list)) else total.body
    source = getattr(body, "source", ())
    load = source[0] if source else None
    (k,) = total.reduce_axis
    return isinstance(load, TensorLoad) and load.indices[-1] is k.var


def schedule_layer_norm(outs):
    outs = as_outputs(outs)
    norm = next((o for o in outs if o.op.name == "T_layer_norm"), None)
    if norm is None or len(outs) != 1:
        return schedule_reduce(outs)
    reds = {t.op.name: t.op for t in norm.op.input_tensors if isinstance(t.op, ComputeOp)}
    total, var = reds.get("T_layer_norm_sum"), reds.get("T_layer_norm_var")
    if total is None or var is None or len(total.reduce_axis) != 1 \
            or not _over_last_axis(total):
        return schedule_reduce(outs)
    s = create_schedule([norm.op])
    outputs = {id(norm.op)}
    for op in (norm.op, total, var):
        inline_injective_producers(s, op, outputs)
    stage = s[norm]
    *rows, last = stage.op.axis
    row = stage.fuse(*rows) if len(rows) > 1 else rows[0]
    size = static_size(norm.shape)
    if size is None or size >= PARALLEL_MIN_ELEMENTS:
        stage.parallel(row)
    vectorize_innermost(stage)
    for red in (total, var):
        vector_reduce(s, red.output(0), stage, row)
    return s

