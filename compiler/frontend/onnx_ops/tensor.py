"""Shape manipulation and indexing: Flatten, Reshape (0 and -1), Transpose, Concat, Split,
Squeeze / Unsqueeze (axes as attribute or input), Slice, Gather, Pad (constant, and edge,
reflect and wrap as slices of the input concatenated), Expand. Shapes, axes, starts and pads
must be known while compiling; a shape, and a Slice's starts and ends, may hold symbolic dims
(from Shape of a symbolic input): such a bound is clamped to the dim at run time, and two
symbolic dims that Expand (or an elementwise operator) meets on one axis are made one, checked
at run time."""
from __future__ import annotations

import numpy as np

from ...arith import Analyzer
from ...relax import op as R
from ...relax import shape_util as su
from ...relax.struct_info import TensorStructInfo
from ...tir import expr as E
from ...tir.functor import collect_vars
from .common import converter, norm_axis
from .elementwise import scalar


def shape_prod(dims):
    """The product of dims (ints or symbolic)."""
    out = 1
    for d in dims:
        out = su.mul(out, d)
    return out


@converter("Flatten")
def _flatten(ctx):
    shape, ndim = ctx.shape(0), ctx.ndim(0)
    axis = int(ctx.attr("axis", 1))
    axis = axis + ndim if axis < 0 else axis
    if not 0 <= axis <= ndim:
        raise ctx.error(f"axis {ctx.attr('axis')} is out of range for {ndim} dims")
    return R.reshape(ctx.input(0), (shape_prod(shape[:axis]), shape_prod(shape[axis:])))


@converter("Reshape", const_inputs=(1,))
def _reshape(ctx):
    target = ctx.dims(1, "shape") if ctx.opset >= 5 and ctx.has(1) else \
        tuple(ctx.attr("shape", ()))
    if int(ctx.attr("allowzero", 0)) and any(isinstance(d, int) and d == 0 for d in target):
        raise ctx.unsupported("allowzero=1 with a 0 in the shape (zero-size tensors)")
    shape = ctx.shape(0)
    out = []
    for i, d in enumerate(target):
        if not isinstance(d, int):
            out.append(d)
        elif d == 0:
            if i >= len(shape):
                raise ctx.error(f"shape {target}: 0 at position {i} copies an input dim, but "
                                f"the input has {len(shape)}")
            out.append(shape[i])
        else:
            out.append(int(d))
    return R.reshape(ctx.input(0), tuple(out))


@converter("Transpose")
def _transpose(ctx):
    perm = ctx.attr("perm")
    return R.permute_dims(ctx.input(0), None if perm is None else [int(p) for p in perm])


@converter("Concat")
def _concat(ctx):
    xs = [x for x in ctx.inputs() if x is not None]
    axis = norm_axis(ctx, ctx.attr("axis", 0 if ctx.opset < 4 else None), ctx.ndim(0))
    return R.concat(xs, axis)


@converter("Split", const_inputs=(1,))
def _split(ctx):
    ndim = ctx.ndim(0)
    axis = norm_axis(ctx, ctx.attr("axis", 0), ndim)
    dim = ctx.shape(0)[axis]
    sizes = ctx.ints(1, "split") if ctx.opset >= 13 else ctx.attr("split")
    n = ctx.num_outputs
    if sizes is None and ctx.attr("num_outputs") is not None:
        n = int(ctx.attr("num_outputs"))
        if isinstance(dim, int):
            chunk = -(-dim // n)
            sizes = [min(chunk, max(dim - i * chunk, 0)) for i in range(n)]
    if sizes is None:
        if isinstance(dim, int) and dim % n:
            raise ctx.error(f"axis {axis} of size {dim} does not split into {n} equal parts")
        parts = R.split(ctx.input(0), n, axis)
    else:
        sizes = [int(s) for s in sizes]
        if isinstance(dim, int) and sum(sizes) != dim:
            raise ctx.error(f"split sizes {sizes} do not add up to the axis size {dim}")
        parts = R.split(ctx.input(0), list(np.cumsum(sizes)[:-1]), axis)
        n = len(sizes)
    parts = ctx.emit(parts)
    return [parts[i] for i in range(n)]


def _axes(ctx, what="axes"):
    if ctx.opset >= 13:
        return ctx.ints(1, what) if ctx.has(1) else None
    axes = ctx.attr("axes")
    return None if axes is None else tuple(int(a) for a in axes)


@converter("Squeeze", const_inputs=(1,))
def _squeeze(ctx):
    axes = _axes(ctx)
    if axes is None:
        shape = ctx.static_shape(0, "Squeeze without axes")
        axes = [i for i, d in enumerate(shape) if d == 1]
    ndim = ctx.ndim(0)
    return R.squeeze(ctx.input(0), [norm_axis(ctx, a, ndim) for a in axes])


@converter("Unsqueeze", const_inputs=(1,))
def _unsqueeze(ctx):
    axes = _axes(ctx)
    if axes is None:
        raise ctx.error("needs axes")
    out_ndim = ctx.ndim(0) + len(axes)
    return R.expand_dims(ctx.input(0), [norm_axis(ctx, a, out_ndim) for a in axes])


@converter("Slice", const_inputs=(1, 2, 3, 4))
def _slice(ctx):
    shape, ndim = ctx.shape(0), ctx.ndim(0)
    if ctx.opset < 10:
        starts, ends = ctx.attr("starts"), ctx.attr("ends")
        axes, steps = ctx.attr("axes"), None
    else:
        starts, ends = ctx.dims(1, "starts"), ctx.dims(2, "ends")
        axes, steps = ctx.ints(3, "axes"), ctx.ints(4, "steps")
    n = len(starts)
    axes = list(range(n)) if axes is None else [norm_axis(ctx, a, ndim) for a in axes]
    steps = [1] * n if steps is None else list(steps)
    if not len(ends) == len(axes) == len(steps) == n:
        raise ctx.error(f"starts {starts}, ends {ends}, axes {axes} and steps {steps} must "
                        "have the same length")
    fixed, moving = ([], [], [], []), ([], [], [], [])
    for a, b, e, s in zip(axes, starts, ends, steps):
        if s == 0:
            raise ctx.error("steps must not be 0")
        d = shape[a]
        inbound = None
        if not (isinstance(b, int) and isinstance(e, int)):
            inbound = symbolic_bounds(ctx, d, b, e, s, shape)
        elif not isinstance(d, int):
            inbound = static_length_bounds(ctx, d, int(b), int(e), s)
        if inbound is not None:
            for part, v in zip(moving, (a, *inbound, s)):
                part.append(v)
            continue
        if isinstance(d, int):
            b, e, _ = slice(b, e, s).indices(d)
            if s < 0:       # -1 means "before index 0" here, not "the last index"
                b = -(d + 1) if b < 0 else b
                e = -(d + 1) if e < 0 else e
        for part, v in zip(fixed, (a, b, e, s)):
            part.append(v)
    x = ctx.input(0)
    if fixed[0] or not moving[0]:
        x = R.strided_slice(x, *fixed)
    if moving[0]:
        x = R.strided_slice(ctx.emit(x), *moving, assume_inbound=True)
    return x


def _analyzer(*exprs):
    """An Analyzer knowing that the model's dims in `exprs` are at least 1."""
    ana = Analyzer()
    for e in exprs:
        if isinstance(e, E.PrimExpr):
            for v in collect_vars(e):
                ana.bind(v, (1, 2 ** 62))
    return ana


def _dim_vars(shape) -> set:
    """The dims of `shape` that are variables: what a kernel reads from the tensor (a dim
    that is an expression is read as a value of its own)."""
    return {id(d) for d in shape if isinstance(d, E.Var)}


def _clamped(ctx, d, b, e, s: int):
    """(first index, length) of a slice b:e:s (s > 0) of dim `d`, bounds clamped by ONNX's
    rules (a negative one counts from the end), simplified knowing that dims are >= 1."""
    ana = _analyzer(d, b, e)
    dim = su.dim_expr(d)
    zero = E.const(0, "int64")

    def clamp(v):
        if isinstance(v, int):
            if v >= 2 ** 31:
                return dim
            if v <= -2 ** 31:
                return zero
            if v >= 0:
                return E.binary(E.Min, E.const(v, "int64"), dim)
            return E.binary(E.Max, dim + v, zero)
        if ana.can_prove(v >= 0):
            return E.binary(E.Min, v, dim)
        if ana.can_prove(v < 0):
            return E.binary(E.Max, dim + v, zero)
        raise ctx.unsupported(f"a slice bound ({su.dim_str(v)}) whose sign is known only at "
                              "run time")

    lo = su.norm(ana.simplify(clamp(b)))
    hi = su.norm(ana.simplify(clamp(e)))
    length = su.norm(ana.simplify((E.binary(E.Max, su.dim_expr(hi) - su.dim_expr(lo), zero)
                                   + (s - 1)) // s))
    return lo, length


def static_length_bounds(ctx, d, b: int, e: int, s: int):
    """(begin, end) for strided_slice with assume_inbound when a slice of a symbolic dim by
    int bounds has a first index and a length that are ints (`x[:, 0:1]` of `seq` is one
    element, as seq >= 1), else None."""
    if s < 0:
        return None
    lo, length = _clamped(ctx, d, b, e, s)
    if isinstance(lo, int) and isinstance(length, int) and length > 0:
        return lo, lo + (length - 1) * s + 1
    return None


def symbolic_bounds(ctx, d, b, e, s: int, shape):
    """(begin, end) of a slice of dim `d` whose bound `b` or `e` is symbolic, clamped by ONNX's
    rules (a negative bound counts from the end) and given to strided_slice with
    assume_inbound. The first index must be computable from the input's dims (its kernel reads
    them from the tensor); a length that is not (a clamp `min(seq, 128)` of a static dim) is
    computed at run time into a dim of its own, bound by a match_cast."""
    if s < 0:
        raise ctx.unsupported(f"a negative step ({s}) with a bound known only at run time "
                              f"({su.dim_str(b)}:{su.dim_str(e)})")
    lo, length = _clamped(ctx, d, b, e, s)
    known = _dim_vars(shape)
    if isinstance(lo, E.PrimExpr) and any(id(v) not in known for v in collect_vars(lo)):
        raise ctx.unsupported(f"a slice starting at {su.dim_str(lo)}, computed from dims the "
                              "sliced tensor does not have")
    if isinstance(length, E.PrimExpr) and not isinstance(length, E.Var) and \
            any(id(v) not in known for v in collect_vars(length)):
        length = ctx.dim_var(length, "slice_len")
    return lo, su.add(lo, su.add(su.mul(su.sub(length, 1), s), 1) if s > 1 else length)


@converter("Gather")
def _gather(ctx):
    x, ndim = ctx.input(0), ctx.ndim(0)
    axis = norm_axis(ctx, ctx.attr("axis", 0), ndim)
    dim = ctx.shape(0)[axis]
    if ctx.is_known(1) and isinstance(dim, int):
        idx = np.asarray(ctx.const(1))
        if np.any((idx < -dim) | (idx >= dim)):
            raise ctx.error(f"indices out of range for axis {axis} of size {dim}")
        idx = np.where(idx < 0, idx + dim, idx).astype(idx.dtype)
        return R.take(x, scalar(idx, str(idx.dtype)), axis)
    # Run-time indices: the kernel counts negative ones from the end and fails on any outside
    # [-dim, dim) with an IndexError, as onnxruntime does (topi.take, mode "raise").
    return R.take(x, ctx.input(1), axis, mode="raise")


@converter("Pad", const_inputs=(1, 2, 3))
def _pad(ctx):
    ndim = ctx.ndim(0)
    if ctx.opset < 11:
        pads, value = list(ctx.attr("pads", [])), float(ctx.attr("value", 0.0))
        axes = None
    else:
        pads = list(ctx.ints(1, "pads"))
        v = ctx.const(2, "constant_value")
        value = 0.0 if v is None or np.asarray(v).size == 0 else np.asarray(v).item()
        axes = ctx.ints(3, "axes")
    mode = ctx.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ctx.unsupported(f"mode={mode!r}")
    axes = list(range(ndim)) if axes is None else [norm_axis(ctx, a, ndim) for a in axes]
    n = len(axes)
    if len(pads) != 2 * n:
        raise ctx.error(f"pads {pads} must have {2 * n} values (begin and end per axis)")
    width = [0] * (2 * ndim)
    crop = []
    for k, a in enumerate(axes):
        before, after = int(pads[k]), int(pads[n + k])
        width[2 * a], width[2 * a + 1] = max(before, 0), max(after, 0)
        if before < 0 or after < 0:
            crop.append((a, -min(before, 0), min(after, 0)))
    y = ctx.input(0)
    if crop:    # negative pads crop first; the padding copies from what is left
        big = np.iinfo(np.int64).max
        y = R.strided_slice(y, [a for a, _, _ in crop], [b for _, b, _ in crop],
                            [e if e < 0 else big for _, _, e in crop])
    if any(width) and mode == "constant":
        y = R.nn.pad(y, width, mode, float(value))
    elif any(width):
        shape = list(ctx.static_shape(0, f"Pad mode={mode!r}"))
        for a, b, e in crop:
            shape[a] -= b - e
        for a in range(ndim):
            y = _pad_axis(ctx, y, shape, a, width[2 * a], width[2 * a + 1], mode)
    return y


def _pad_axis(ctx, y, shape, axis, before, after, mode):
    """`y` padded on one axis by copies of its own elements: the edge element repeated
    (edge), the elements mirrored about the edge (reflect) or those of the other end (wrap)."""
    if not before and not after:
        return y
    d = shape[axis]
    if mode == "reflect" and max(before, after) >= d:
        raise ctx.error(f"reflect padding of {max(before, after)} on axis {axis} needs at "
                        f"least {max(before, after) + 1} elements there, it has {d}")
    if mode == "wrap" and max(before, after) > d:
        raise ctx.unsupported(f"wrap padding of {max(before, after)} on an axis of {d} "
                              "elements (more than one turn)")

    def part(begin, end, stride, n):
        piece = R.strided_slice(y, [axis], [begin], [end], [stride])
        if mode != "edge":
            return piece
        out_shape = list(shape)
        out_shape[axis] = n
        return R.broadcast_to(piece, tuple(out_shape))

    parts = []
    if before:
        parts.append({"edge": (0, 1, 1), "reflect": (before, 0, -1),
                      "wrap": (d - before, d, 1)}[mode] + (before,))
    parts.append(None)
    if after:
        # a negative end of a negative stride means "before index 0": -(d + 1)
        parts.append({"edge": (d - 1, d, 1),
                      "reflect": (d - 2, d - 2 - after if d - 2 - after >= 0 else -(d + 1), -1),
                      "wrap": (0, after, 1)}[mode] + (after,))
    pieces = [y if p is None else part(*p) for p in parts]
    new_shape = list(shape)
    new_shape[axis] = d + before + after
    shape[:] = new_shape
    return R.concat(pieces, axis)


@converter("Expand", const_inputs=(1,))
def _expand(ctx):
    target = list(ctx.dims(1, "shape"))
    shape = list(ctx.shape(0))
    n = max(len(target), len(shape))
    target = [1] * (n - len(target)) + target
    shape = [1] * (n - len(shape)) + shape
    out = []
    for d, t in zip(shape, target):
        if isinstance(t, int) and t == 1:
            out.append(d)
        elif not isinstance(t, int):
            # a symbolic dim is the input's, or what the input's 1 broadcasts to
            out.append(t)
        elif isinstance(d, int) and d not in (1, t):
            raise ctx.error(f"cannot expand {tuple(ctx.shape(0))} to {tuple(target)}")
        else:
            out.append(t)
    x = ctx.input(0)
    if len(ctx.shape(0)) < n:
        x = R.reshape(x, tuple(shape))
    # two symbolic dims not known to be equal (`slice_len` to `seq`): one, checked at run time
    same = [t if not isinstance(d, int) and not isinstance(t, int) and not su.equal(d, t)
            else d for d, t in zip(shape, target)]
    if any(a is not b for a, b in zip(same, shape)):
        x = ctx.match_cast(ctx.emit(x), TensorStructInfo(tuple(same), ctx.dtype(0)))
    return R.broadcast_to(x, tuple(out))
