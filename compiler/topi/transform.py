"""Index-mapping operators (tag INJECTIVE): reshape, transpose, concatenate, split, squeeze,
expand_dims, strided_slice, take, where (BROADCAST), and layout helpers.

Shapes are static here except where noted (reshape, transpose and strided_slice take symbolic
sizes).
"""
from __future__ import annotations

from typing import List, Sequence

from .. import te
from ..ir.errors import IRError
from ..tir import expr as E
from . import tag
from .broadcast import broadcast_index, broadcast_shape
from .utils import get_const_int, get_const_tuple, normalize_axes, normalize_axis, simplify


def _flat_index(idx, shape):
    flat = None
    for i, s in zip(idx, shape):
        flat = i if flat is None else flat * s + i
    return E.const(0) if flat is None else flat


def _unflatten(flat, shape) -> list:
    out = []
    for s in reversed(shape):
        out.append(te.floormod(flat, s))
        flat = te.floordiv(flat, s)
    return list(reversed(out))


def reshape(a, newshape):
    """`a` with shape `newshape` (one entry may be -1: inferred), the elements in row-major
    order."""
    newshape = list(newshape)
    size = 1
    for s in get_const_tuple(a.shape):
        size = size * s
    if sum(1 for s in newshape if isinstance(s, int) and s == -1) > 1:
        raise IRError(f"reshape: at most one -1 in the new shape {newshape}")
    if any(isinstance(s, int) and s == -1 for s in newshape):
        known = 1
        for s in newshape:
            if not (isinstance(s, int) and s == -1):
                known *= get_const_int(s, "reshape size")
        total = get_const_int(size, "reshape: the input size")
        if total % known:
            raise IRError(f"reshape: cannot reshape {total} elements into {newshape}")
        newshape = [total // known if isinstance(s, int) and s == -1 else s for s in newshape]
    shape = tuple(E.convert(s) for s in newshape)
    return te.compute(shape, lambda *i: a(*_unflatten(_flat_index(i, shape), a.shape)),
                      name="T_reshape", tag=tag.INJECTIVE)


def transpose(a, axes=None):
    """`a` with its axes permuted (reversed when `axes` is None), as numpy.transpose."""
    axes = list(range(a.ndim))[::-1] if axes is None else \
        [normalize_axis(int(x), a.ndim, "transpose") for x in axes]
    if sorted(axes) != list(range(a.ndim)):
        raise IRError(f"transpose: axes {axes} are not a permutation of 0..{a.ndim - 1}")
    shape = tuple(a.shape[x] for x in axes)

    def f(*i):
        idx = [None] * a.ndim
        for k, x in enumerate(axes):
            idx[x] = i[k]
        return a(*idx)

    return te.compute(shape, f, name="T_transpose", tag=tag.INJECTIVE)


def concatenate(a_tuple: Sequence, axis: int = 0):
    """The tensors joined along `axis` (all other dimensions equal); their sizes along it may
    be symbolic."""
    tensors = list(a_tuple)
    if not tensors:
        raise IRError("concatenate: no tensors given")
    axis = normalize_axis(axis, tensors[0].ndim, "concatenate")
    sizes = [get_const_tuple([t.shape[axis]])[0] for t in tensors]
    for t in tensors[1:]:
        if t.ndim != tensors[0].ndim:
            raise IRError("concatenate: the tensors have different numbers of dimensions")
    offsets = [0]
    for size in sizes:
        total = offsets[-1] + size
        offsets.append(total if isinstance(total, int) else simplify(total))
    shape = list(tensors[0].shape)
    shape[axis] = E.const(offsets[-1]) if isinstance(offsets[-1], int) else offsets[-1]

    def f(*i):
        def load(k):
            idx = list(i)
            idx[axis] = i[axis] - offsets[k] if not _is_zero(offsets[k]) else i[axis]
            return tensors[k](*idx)

        def pick(lo, hi):
            # A balanced tree of selects: many inputs (DenseNet concatenates dozens) give an
            # expression of logarithmic depth, one compare per level.
            if hi - lo == 1:
                return load(lo)
            mid = (lo + hi) // 2
            return te.if_then_else(i[axis] < offsets[mid], pick(lo, mid), pick(mid, hi))

        return pick(0, len(tensors))

    return te.compute(tuple(shape), f, name="T_concat", tag=tag.INJECTIVE)


def _is_zero(v) -> bool:
    return isinstance(v, int) and v == 0


def split(ary, indices_or_sections, axis: int = 0) -> List:
    """Pieces of `ary` along `axis`: an int gives that many equal sections, a list the split
    points, as numpy.split."""
    axis = normalize_axis(axis, ary.ndim, "split")
    size = get_const_int(ary.shape[axis], "split size")
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0 or size % n:
            raise IRError(f"split: {size} elements along axis {axis} do not split into {n} "
                          "equal sections")
        points = [size // n * k for k in range(1, n)]
    else:
        points = [int(p) for p in indices_or_sections]
    bounds = [0] + points + [size]
    outs = []
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        if hi < lo:
            raise IRError(f"split: the split points {points} are not increasing")
        shape = list(ary.shape)
        shape[axis] = E.const(hi - lo)

        def f(*i, lo=lo):
            idx = list(i)
            idx[axis] = i[axis] + lo if lo else i[axis]
            return ary(*idx)

        outs.append(te.compute(tuple(shape), f, name=f"T_split{k}", tag=tag.INJECTIVE))
    return outs


def squeeze(a, axis=None):
    """`a` without the given dimensions of size 1 (all of them when axis is None)."""
    shape = get_const_tuple(a.shape)
    if axis is None:
        axes = [k for k, s in enumerate(shape) if isinstance(s, int) and s == 1]
    else:
        axes = normalize_axes(axis, a.ndim, "squeeze")
        for k in axes:
            if shape[k] != 1:
                raise IRError(f"squeeze: dimension {k} has size {shape[k]}, not 1")
    kept = [k for k in range(a.ndim) if k not in axes]

    def f(*i):
        idx = [E.const(0)] * a.ndim
        for k, v in zip(kept, i):
            idx[k] = v
        return a(*idx)

    return te.compute(tuple(a.shape[k] for k in kept), f, name="T_squeeze", tag=tag.INJECTIVE)


def expand_dims(a, axis: int, num_newaxis: int = 1):
    """`a` with `num_newaxis` dimensions of size 1 inserted at `axis`."""
    axis = normalize_axis(axis, a.ndim + 1, "expand_dims")
    shape = tuple(a.shape[:axis]) + (E.const(1),) * num_newaxis + tuple(a.shape[axis:])
    return te.compute(shape, lambda *i: a(*(i[:axis] + i[axis + num_newaxis:])),
                      name="T_expand_dims", tag=tag.INJECTIVE)


_INT64_MAX = 2 ** 63 - 1


def _symbolic_slice(dim, b, e, s: int, inbound: bool = False):
    """(first index, step, length) of range(dim)[b:e:s] when `dim` or a bound is symbolic,
    numpy's rules: negative int bounds count from the end, out-of-range ones are clamped; a
    symbolic bound (stride positive) is non-negative, clamped to `dim` unless `inbound`."""
    dim = E.cast("int64", dim) if dim.dtype != "int64" else dim
    zero = E.const(0, "int64")

    def bound(v, lowest, highest):
        if isinstance(v, E.PrimExpr):
            v = E.cast("int64", v) if v.dtype != "int64" else v
            return v if inbound else E.binary(E.Min, v, highest)
        if inbound and abs(v) < 2 ** 31:
            return E.const(v, "int64") if v >= 0 else dim + v
        if v >= 0:
            return E.binary(E.Min, E.const(v, "int64"), highest) if v < 2 ** 31 else highest
        return E.binary(E.Max, dim + v, lowest) if v > -2 ** 31 else lowest

    if s > 0:
        lo, hi = bound(b, zero, dim), bound(e, zero, dim)
        n = ((hi - lo if inbound else E.binary(E.Max, hi - lo, zero)) + (s - 1)) // s
    else:
        last, before = dim - 1, E.const(-1, "int64")
        lo, hi = bound(b, before, last), bound(e, before, last)
        n = (E.binary(E.Max, lo - hi, zero) + (-s - 1)) // -s
    return simplify(lo), s, simplify(n)


def strided_slice(a, begin, end, strides=None, axes=None, slice_mode="end",
                  assume_inbound=False):
    """a[begin:end:strides] on the given axes (all leading axes when `axes` is None), with
    numpy's rules for negative and out-of-range bounds; slice_mode "size" reads `end` as
    sizes (-1: to the end). A sliced dim may be symbolic: the first index and the length are
    then expressions of it. A bound may be symbolic too (an int64 expression, non-negative,
    the stride positive): clamped to the dim, or with `assume_inbound` used as it is."""
    shape = get_const_tuple(a.shape)
    axes = list(range(len(begin))) if axes is None else \
        [normalize_axis(int(x), a.ndim, "strided_slice") for x in axes]
    strides = [1] * len(axes) if strides is None else list(strides)
    if not (len(begin) == len(end) == len(axes)) or len(strides) not in (1, len(axes)):
        raise IRError("strided_slice: begin, end, strides and axes must have one entry per "
                      "sliced axis")
    if len(strides) == 1:
        strides = strides * len(axes)
    start = [0] * a.ndim
    step = [1] * a.ndim
    out_shape = list(a.shape)
    for ax, b, e, s in zip(axes, begin, end, strides):
        dim = shape[ax]
        symbolic = isinstance(b, E.PrimExpr) or isinstance(e, E.PrimExpr)
        b = b if isinstance(b, E.PrimExpr) else int(b)
        e = e if isinstance(e, E.PrimExpr) else int(e)
        s = int(s)
        if symbolic and (s <= 0 or slice_mode == "size"):
            raise IRError("strided_slice: a symbolic begin or end needs a positive stride and "
                          "slice_mode 'end'")
        if slice_mode == "size":
            if not isinstance(dim, int) and e < 0:
                e = _INT64_MAX
            else:
                e = dim if e < 0 else b + e
            s = 1
        if s == 0:
            raise IRError("strided_slice: a stride of 0")
        if not isinstance(dim, int) or symbolic:
            dim = E.const(dim, "int64") if isinstance(dim, int) else dim
            start[ax], step[ax], out_shape[ax] = _symbolic_slice(dim, b, e, s,
                                                                 assume_inbound and s > 0)
            continue
        lo, hi, st = slice(b, e, s).indices(dim)
        n = max(0, (hi - lo + (st - (1 if st > 0 else -1))) // st)
        start[ax], step[ax], out_shape[ax] = lo, st, E.const(n)

    # on a tensor with a symbolic dim, every index is int64 (its strides are)
    wide = any(not isinstance(d, int) for d in shape)

    def at(v, k):
        """Input index of output index v on axis k, in v's type (int64 when `wide`)."""
        if step[k] == 1 and E.is_const_int(E.convert(start[k]), 0):
            return v
        if wide and v.dtype != "int64":
            v = E.cast("int64", v)
        first = start[k]
        first = E.cast(v.dtype, first) if isinstance(first, E.PrimExpr) else \
            E.const(int(first), v.dtype)
        return v * E.const(step[k], v.dtype) + first if step[k] != 1 else v + first

    def f(*i):
        return a(*[at(i[k], k) for k in range(a.ndim)])

    return te.compute(tuple(out_shape), f, name="T_strided_slice", tag=tag.INJECTIVE)


def take(a, indices, axis=None, batch_dims=0, mode="clip"):
    """Elements of `a` at `indices` (a tensor, or one scalar index: the axis goes away) along
    `axis` (of the flattened `a` when None), as numpy.take. mode: "clip" clamps indices into
    range, "wrap" takes them modulo the size (so -1 is the last), "fast" assumes they are in
    range, "raise" (numpy's default, ONNX's Gather) counts negative indices in [-n, 0) from
    the end and makes the kernel fail with "take: index 1000 out of range [-10, 10) on axis 0"
    (an IndexError) for any other (a `tir.checked_index`, see
    compiler/tir/transform/lower_checked_index.py)."""
    if batch_dims:
        raise IRError("take: batch_dims other than 0 is not supported")
    if mode not in ("clip", "wrap", "fast", "raise"):
        raise IRError(f"take: mode '{mode}' is not 'clip', 'wrap', 'fast' or 'raise'")
    if axis is None:
        size = 1
        for s in a.shape:
            size = size * s
        flat = reshape(a, (get_const_int(size, "take: input size"),))
        return take(flat, indices, 0, 0, mode)
    axis = normalize_axis(axis, a.ndim, "take")
    n = a.shape[axis]
    if isinstance(indices, te.Tensor):
        ind_shape = tuple(indices.shape)
        index = indices
    else:   # one scalar index (a 0-d constant folded in): the axis goes away
        ind_shape = ()
        scalar = E.convert(indices)

        def index():
            return scalar

    # positions on a symbolic (int64) axis stay int64: its other index arithmetic is int64
    width = "int64" if isinstance(n, E.PrimExpr) and not isinstance(n, E.IntImm) and \
        str(n.dtype) == "int64" else "int32"

    def fix(j):
        if mode == "raise":
            # checked in the index's own width (int64 indices such as 2**40 are not truncated
            # first), then narrowed: the wrapped index lies in [0, n)
            j = j if j.dtype in ("int32", "int64") else j.astype("int64")
            checked = E.Call(j.dtype, "tir.checked_index",
                             (j, E.cast(j.dtype, n), E.StringImm("take"), E.const(axis)))
            return checked if j.dtype == width else checked.astype(width)
        j = j if j.dtype == width else j.astype(width)
        if mode == "clip":
            return E.Min(E.Max(j, E.const(0)), n - 1)
        if mode == "wrap":
            return te.floormod(j, n)
        return j

    def f(*i):
        before, mid, after = i[:axis], i[axis:axis + len(ind_shape)], i[axis + len(ind_shape):]
        return a(*before, fix(index(*mid)), *after)

    shape = tuple(a.shape[:axis]) + ind_shape + tuple(a.shape[axis + 1:])
    return te.compute(shape, f, name="T_take", tag=tag.INJECTIVE)


def where(condition, x, y):
    """x where condition else y, the three broadcast together."""
    tensors = [t for t in (condition, x, y) if isinstance(t, te.Tensor)]
    shape = ()
    for t in tensors:
        shape = broadcast_shape(shape, t.shape, "where")

    def val(v, i):
        return v(*broadcast_index(v, i)) if isinstance(v, te.Tensor) else E.convert(v)

    def f(*i):
        c = val(condition, i)
        if not c.dtype.is_bool:
            c = E.binary(E.NE, c, E.make_const(c.dtype, 0))
        return te.select(c, val(x, i), val(y, i))

    return te.compute(shape, f, name="T_where", tag=tag.BROADCAST)
