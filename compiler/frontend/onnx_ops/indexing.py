"""Indexing by index tensors, written with the graph-level operators there are (each exact):
GatherElements and GatherND (run-time or known indices: flat positions, then one take),
ScatterElements and ScatterND (indices known while compiling: the positions each update
writes are worked out now, the data is updated at run time with where / take; reductions
add, mul, max and min apply the updates in order), OneHot, Trilu (a constant mask), CumSum (a
log-step prefix sum of shifted copies) and TopK (each element's rank from pairwise
comparisons, ties to the lower index). Shapes must be static, but for a GatherElements whose
indices are one line along the axis, GatherND with one index component past dims of size 1
and CumSum along a symbolic axis."""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from ...relax import op as R
from ...relax.struct_info import TensorStructInfo
from .common import const, converter, norm_axis
from .elementwise import scalar


def _strides(shape: Sequence[int]) -> List[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * int(shape[i + 1])
    return out


def _int64(ctx, i):
    x = ctx.input(i)
    return x if ctx.dtype(i) == "int64" else R.astype(x, "int64")


def _wrap_negative(idx, dims):
    """Run-time indices with the negative ones counted from the end of `dims` (an int, or a
    list with one dim per entry of idx's last axis), checked at run time: an index outside
    [-dim, dim) raises IndexError, as in ONNX Runtime (a lookup in arange(dim), mode raise)."""
    if isinstance(dims, (int, np.integer)):
        return R.take(const(np.arange(int(dims)), "int64"), idx, 0, mode="raise")
    dims = [int(d) for d in dims]
    last = len(idx.struct_info.shape) - 1
    parts = [R.strided_slice(idx, [last], [k], [k + 1]) for k in range(len(dims))]
    return R.concat([R.take(const(np.arange(d), "int64"), p, 0, mode="raise")
                     for d, p in zip(dims, parts)], last)


def _checked(ctx, idx: np.ndarray, dims, what="indices") -> np.ndarray:
    idx = np.asarray(idx).astype("int64")
    dims = np.asarray(dims, "int64")
    if np.any((idx < -dims) | (idx >= dims)):
        raise ctx.error(f"{what} out of range for dims {dims.tolist()}")
    return np.where(idx < 0, idx + dims, idx)


# ---- gathers --------------------------------------------------------------------------------
def take_along_axis(ctx, x, shape, idx, idx_shape, axis):
    """x gathered on `axis` by `idx` (GatherElements: out[i] = x[i with i[axis] = idx[i]]),
    `idx` run-time int64 indices, already in range, or a known array."""
    strides = _strides(shape)
    grids = np.indices(tuple(idx_shape), dtype="int64") if idx_shape else np.zeros((0,), "int64")
    base = np.zeros(tuple(idx_shape), "int64")
    for d in range(len(shape)):
        if d != axis:
            base = base + grids[d] * strides[d]
    flat_x = R.reshape(x, (int(np.prod(shape, dtype=np.int64)),))
    if isinstance(idx, np.ndarray):
        return R.take(flat_x, const(idx * strides[axis] + base, "int64"), 0)
    flat = R.add(R.multiply(idx, scalar(strides[axis], "int64")), const(base, "int64"))
    return R.take(flat_x, flat, 0)


def _gather_line(ctx, x, shape, axis):
    """GatherElements whose indices have size 1 on every other axis (a row of positions,
    possibly of a symbolic length): x's first line along `axis`, taken at the indices."""
    others = [d for d in range(len(shape)) if d != axis]
    line = R.strided_slice(x, others, [0] * len(others), [1] * len(others)) if others else x
    line = R.reshape(ctx.emit(line), (shape[axis],))
    return R.take(ctx.emit(line), ctx.input(1), 0, mode="raise")


@converter("GatherElements")
def _gather_elements(ctx):
    ishape0 = ctx.shape(1)
    axis0 = norm_axis(ctx, ctx.attr("axis", 0), len(ishape0))
    if len(ctx.shape(0)) == len(ishape0) and \
            all(d == 1 for k, d in enumerate(ishape0) if k != axis0) and \
            not all(isinstance(d, int) for d in ishape0 + ctx.shape(0)):
        return _gather_line(ctx, ctx.input(0), ctx.shape(0), axis0)
    shape = ctx.static_shape(0, "GatherElements")
    ishape = ctx.static_shape(1, "GatherElements")
    if len(ishape) != len(shape):
        raise ctx.error(f"indices of rank {len(ishape)} for data of rank {len(shape)}")
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(shape))
    if ctx.is_known(1):
        idx = _checked(ctx, ctx.const(1), shape[axis])
    else:
        idx = _wrap_negative(_int64(ctx, 1), shape[axis])
    return take_along_axis(ctx, ctx.input(0), shape, idx, ishape, axis)


def _gather_nd_symbolic(ctx, shape, ishape):
    """GatherND (batch_dims 0) on symbolic shapes where every index component but one
    addresses a dim of size 1 (its index is 0 or -1, the one element): a take on the other
    dim, by that component (counted from the end when negative, checked)."""
    m = ishape[-1]
    if not isinstance(m, int) or not 1 <= m <= len(shape) or int(ctx.attr("batch_dims", 0)):
        raise ctx.unsupported(f"GatherND with indices of shape {ishape} (batch_dims="
                              f"{ctx.attr('batch_dims', 0)}) on data of symbolic shape {shape}")
    moving = [k for k in range(m) if not (isinstance(shape[k], int) and shape[k] == 1)]
    if len(moving) != 1:
        raise ctx.unsupported(f"GatherND on data of symbolic shape {shape} with {len(moving)} "
                              "index components on dims other than 1 (one is supported)")
    k = moving[0]
    x = R.reshape(ctx.input(0), (shape[k],) + tuple(shape[m:]))
    last = len(ishape) - 1
    idx = R.strided_slice(ctx.input(1), [last], [k], [k + 1])
    idx = R.reshape(ctx.emit(idx), tuple(ishape[:-1]))
    return R.take(ctx.emit(x), ctx.emit(idx), 0, mode="raise")


@converter("GatherND")
def _gather_nd(ctx):
    if not all(isinstance(d, int) for d in ctx.shape(0) + ctx.shape(1)) and \
            not ctx.is_known(1):
        return _gather_nd_symbolic(ctx, ctx.shape(0), ctx.shape(1))
    shape = ctx.static_shape(0, "GatherND")
    ishape = ctx.static_shape(1, "GatherND")
    b = int(ctx.attr("batch_dims", 0))
    m = ishape[-1] if ishape else 0
    if not ishape or m < 1 or b + m > len(shape) or tuple(ishape[:b]) != tuple(shape[:b]):
        raise ctx.error(f"indices of shape {ishape} (batch_dims={b}) do not index data of "
                        f"shape {shape}")
    inner, rest = shape[b:b + m], tuple(shape[b + m:])
    n_inner = int(np.prod(inner, dtype=np.int64))
    batch_grid = np.indices(tuple(ishape[:b]), dtype="int64")
    offset = np.zeros(tuple(ishape[:b]), "int64")
    for d, s in enumerate(_strides(shape[:b])):
        offset = offset + batch_grid[d] * s * n_inner
    offset = offset.reshape(tuple(ishape[:b]) + (1,) * (len(ishape) - 1 - b))
    x = R.reshape(ctx.input(0), (int(np.prod(shape[:b + m], dtype=np.int64)),) + rest)
    strides = np.asarray(_strides(inner), "int64")
    if ctx.is_known(1):
        idx = _checked(ctx, ctx.const(1), inner)
        return R.take(x, const((idx * strides).sum(-1) + offset, "int64"), 0)
    idx = _wrap_negative(_int64(ctx, 1), list(inner))
    flat = R.sum(R.multiply(idx, const(strides, "int64")), [len(ishape) - 1])
    if b:
        flat = R.add(flat, const(offset, "int64"))
    return R.take(x, flat, 0)


# ---- scatters -------------------------------------------------------------------------------
_COMBINE = {"add": R.add, "mul": R.multiply, "max": R.maximum, "min": R.minimum}


def _scatter_rows(ctx, data, rows: int, width: int, pos: np.ndarray, updates, reduction):
    """data (rows, width) with row pos[j] replaced by (or combined with) row j of updates
    (len(pos), width), in the order of j."""
    if reduction not in ("none",) + tuple(_COMBINE):
        raise ctx.unsupported(f"reduction={reduction!r}")
    pos = pos.reshape(-1)
    out = data
    rounds: List[np.ndarray] = []      # rounds[r][p]: the r-th update of row p, or -1
    for j, p in enumerate(pos.tolist()):
        r = 0
        if reduction == "none":
            if not rounds:
                rounds.append(np.full(rows, -1, "int64"))
            rounds[0][p] = j    # the last update of a row wins
            continue
        while r < len(rounds) and rounds[r][p] >= 0:
            r += 1
        if r == len(rounds):
            rounds.append(np.full(rows, -1, "int64"))
        rounds[r][p] = j
    for src in rounds:
        mask = const((src >= 0).reshape(rows, 1), "bool")
        picked = R.take(updates, const(np.maximum(src, 0), "int64"), 0)
        if reduction != "none":
            picked = _COMBINE[reduction](out, picked)
        out = R.where(mask, picked, out)
    return out


@converter("ScatterElements", "Scatter", const_inputs=(1,))
def _scatter_elements(ctx):
    shape = ctx.static_shape(0, ctx.op_type)
    ishape = ctx.static_shape(1, ctx.op_type)
    if not ctx.is_known(1):
        raise ctx.unsupported("indices computed at run time (they must be known while "
                              "compiling)")
    axis = norm_axis(ctx, ctx.attr("axis", 0), len(shape))
    idx = _checked(ctx, ctx.const(1), shape[axis])
    strides = _strides(shape)
    grids = np.indices(tuple(ishape), dtype="int64")
    pos = idx * strides[axis]
    for d in range(len(shape)):
        if d != axis:
            pos = pos + grids[d] * strides[d]
    n, m = int(np.prod(shape, dtype=np.int64)), int(np.prod(ishape, dtype=np.int64))
    data = R.reshape(ctx.input(0), (n, 1))
    updates = R.reshape(ctx.input(2), (m, 1))
    out = _scatter_rows(ctx, data, n, 1, pos, updates, ctx.attr("reduction", "none"))
    return R.reshape(out, tuple(shape))


@converter("ScatterND", const_inputs=(1,))
def _scatter_nd(ctx):
    shape = ctx.static_shape(0, "ScatterND")
    ishape = ctx.static_shape(1, "ScatterND")
    if not ctx.is_known(1):
        raise ctx.unsupported("indices computed at run time (they must be known while "
                              "compiling)")
    k = ishape[-1]
    if k > len(shape):
        raise ctx.error(f"indices of shape {ishape} index more dims than data {shape}")
    idx = _checked(ctx, ctx.const(1), shape[:k])
    pos = (idx * np.asarray(_strides(shape[:k]), "int64")).sum(-1)
    rows = int(np.prod(shape[:k], dtype=np.int64))
    width = int(np.prod(shape[k:], dtype=np.int64))
    m = int(np.prod(ishape[:-1], dtype=np.int64))
    data = R.reshape(ctx.input(0), (rows, width))
    updates = R.reshape(ctx.input(2), (m, width))
    out = _scatter_rows(ctx, data, rows, width, pos, updates, ctx.attr("reduction", "none"))
    return R.reshape(out, tuple(shape))


# ---- one-hot, triangles, running sums, top k ----------------------------------------------
@converter("OneHot", const_inputs=(1,))
def _one_hot(ctx):
    depth = np.asarray(ctx.const(1, "depth")).reshape(-1)
    if depth.size != 1:
        raise ctx.error(f"depth must be a scalar, got {depth.tolist()}")
    depth = int(depth[0])
    ndim = ctx.ndim(0)
    axis = norm_axis(ctx, ctx.attr("axis", -1), ndim + 1)
    # Out of range gives a row of off values (no error): negative ones are counted from the end.
    idx = _int64(ctx, 0)
    idx = R.where(R.less(idx, scalar(0, "int64")), R.add(idx, scalar(depth, "int64")), idx)
    ar_shape = [1] * (ndim + 1)
    ar_shape[axis] = depth
    hot = R.equal(R.expand_dims(idx, [axis]),
                  const(np.arange(depth, dtype="int64").reshape(ar_shape), "int64"))
    vdt = ctx.dtype(2)
    if ctx.is_known(2):
        off, on = (np.asarray(v, dtype=vdt) for v in np.asarray(ctx.const(2)).reshape(-1)[:2])
        return R.where(hot, scalar(on, vdt), scalar(off, vdt))
    values = ctx.input(2)
    off = R.reshape(R.strided_slice(values, [0], [0], [1]), ())
    on = R.reshape(R.strided_slice(values, [0], [1], [2]), ())
    return R.where(hot, on, off)


@converter("Trilu", const_inputs=(1,))
def _trilu(ctx):
    shape = ctx.shape(0)
    if len(shape) < 2 or not all(isinstance(d, int) for d in shape[-2:]):
        raise ctx.error(f"needs an input of at least 2 static trailing dims, got {shape}")
    k = ctx.ints(1, "k")[0] if ctx.has(1) else 0
    ones = np.ones(tuple(shape[-2:]), bool)
    mask = np.triu(ones, k) if int(ctx.attr("upper", 1)) else np.tril(ones, k)
    return R.where(const(mask, "bool"), ctx.input(0), scalar(0, ctx.dtype(0)))


def _flip(x, axis, n):
    return R.strided_slice(x, [axis], [n - 1], [-(n + 1)], [-1])


def _cumsum_symbolic(ctx, x, shape, axis, reverse, exclusive):
    """CumSum along a symbolic axis of n elements: out[i] = sum of x[j] over the j that
    precede i (or follow it: reverse; j = i counted unless exclusive), a (n, n) mask of
    positions compared (arange(n)) and one reduction; O(n^2), exact for integers."""
    n = ctx.dim_var(shape[axis], "cumsum_len")
    if n is not shape[axis]:
        shape = list(shape)
        shape[axis] = n
        x = ctx.match_cast(ctx.emit(x), TensorStructInfo(tuple(shape), ctx.dtype(0)))
    last = len(shape) - 1
    perm = [d for d in range(len(shape)) if d != axis] + [axis]
    if axis != last:
        x = R.permute_dims(x, perm)
    pos = ctx.emit(R.arange(0, n, 1, "int64"))
    i, j = R.reshape(pos, (n, 1)), R.reshape(pos, (1, n))
    compare = {(0, 0): R.less_equal, (0, 1): R.less, (1, 0): R.greater_equal,
               (1, 1): R.greater}[(int(bool(reverse)), int(bool(exclusive)))]
    terms = R.where(compare(j, i), R.expand_dims(x, [last]), scalar(0, ctx.dtype(0)))
    y = R.sum(terms, [last + 1])
    if axis != last:
        y = R.permute_dims(y, [int(k) for k in np.argsort(perm)])
    return y


@converter("CumSum", const_inputs=(1,))
def _cumsum(ctx):
    axis = norm_axis(ctx, ctx.ints(1, "axis")[0], ctx.ndim(0))
    if not isinstance(ctx.shape(0)[axis], int):
        return _cumsum_symbolic(ctx, ctx.input(0), ctx.shape(0), axis,
                                int(ctx.attr("reverse", 0)), int(ctx.attr("exclusive", 0)))
    shape = list(ctx.static_shape(0, "CumSum"))
    n, dt = shape[axis], ctx.dtype(0)
    y = ctx.input(0)
    reverse, exclusive = int(ctx.attr("reverse", 0)), int(ctx.attr("exclusive", 0))

    def shifted(v, s):     # v moved s places along the axis, zeros in front
        zshape = list(shape)
        zshape[axis] = s
        return R.concat([const(np.zeros(zshape), dt),
                         R.strided_slice(v, [axis], [0], [n - s])], axis)

    if reverse:
        y = _flip(y, axis, n)
    if exclusive and n:
        y = shifted(y, 1)
    s = 1
    while s < n:
        y = R.add(y, shifted(y, s))
        s *= 2
    if reverse:
        y = _flip(y, axis, n)
    return y


@converter("TopK", const_inputs=(1,))
def _topk(ctx):
    shape = list(ctx.static_shape(0, "TopK"))
    ndim = len(shape)
    axis = norm_axis(ctx, ctx.attr("axis", -1), ndim)
    k = ctx.ints(1, "K")[0] if ctx.opset >= 10 else int(ctx.attr("k"))
    n = shape[axis]
    if not 0 <= k <= n:
        raise ctx.error(f"K={k} is out of range for an axis of {n} elements")
    x = ctx.input(0)
    perm = [d for d in range(ndim) if d != axis] + [axis]
    moved = perm != list(range(ndim))
    if moved:
        x = R.permute_dims(x, perm)
    xs = [shape[d] for d in perm]
    a, b = R.expand_dims(x, [ndim]), R.expand_dims(x, [ndim - 1])  # element i, element j
    better = R.greater(b, a) if int(ctx.attr("largest", 1)) else R.less(b, a)
    earlier = np.arange(n)[None, :] < np.arange(n)[:, None]        # [i, j]: j before i
    beats = R.logical_or(better, R.logical_and(R.equal(b, a), const(earlier, "bool")))
    rank = R.sum(R.astype(beats, "int64"), [ndim])                  # (..., n)
    slots = const(np.arange(k, dtype="int64").reshape(k, 1), "int64")
    hot = R.equal(R.expand_dims(rank, [ndim - 1]), slots)           # (..., k, n)
    idx = R.argmax(R.astype(hot, "int32"), ndim, False)            # (..., k)
    vals = take_along_axis(ctx, x, xs, idx, xs[:-1] + [k], ndim - 1)
    if moved:
        back = list(np.argsort(perm))
        vals, idx = R.permute_dims(vals, back), R.permute_dims(idx, back)
    return [vals, idx]
