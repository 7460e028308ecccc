"""Shape manipulation: reshape (with -1, and 0 = copy the input dim as in ONNX), flatten (to
1-D), permute_dims, concat, split, squeeze, expand_dims, broadcast_to."""
from __future__ import annotations

from typing import List, Optional, Sequence

from .. import shape_util as su
from ..expr import Call, Expr, ShapeExpr, Tuple
from ..struct_info import ShapeStructInfo, StructInfo, TensorStructInfo, TupleStructInfo, as_dim
from .pattern import INJECTIVE
from .registry import (
    axes_of,
    axis_of,
    fail,
    fmt_shape,
    make_call,
    register,
    tensor_arg,
)


def _shape_arg(call: Call, index: int) -> ShapeStructInfo:
    s = call.args[index].struct_info
    if not isinstance(s, ShapeStructInfo):
        raise fail(call, f"shape must be a shape (R.shape([...])), got {s}")
    return s


def resolve_reshape(call: Call, data: TensorStructInfo,
                    target: Sequence) -> Optional[tuple]:
    """`target` with 0 (copy the input dim) and -1 (the rest) resolved; None when they cannot
    be (the input shape is unknown)."""
    target = list(target)
    if not any(isinstance(d, int) and d in (0, -1) for d in target):
        return tuple(target)
    if data.shape is None:
        return None
    for i, d in enumerate(target):
        if isinstance(d, int) and d == 0:
            if i >= data.ndim:
                raise fail(call, f"0 at position {i} copies an input dim, but the input has "
                                 f"only {data.ndim}")
            target[i] = data.shape[i]
    holes = [i for i, d in enumerate(target) if isinstance(d, int) and d == -1]
    if len(holes) > 1:
        raise fail(call, f"at most one dim may be -1, got {tuple(target)}")
    if holes:
        known_dims = [d for i, d in enumerate(target) if i != holes[0]]
        total_dims = list(data.shape)
        for d in list(known_dims):
            if not isinstance(d, int):
                same = [j for j, t in enumerate(total_dims) if su.equal(t, d)]
                if same:
                    known_dims.remove(d)
                    del total_dims[same[0]]
        known, total = su.product(known_dims), su.product(total_dims)
        if isinstance(known, int) and isinstance(total, int):
            if known == 0 or total % known:
                raise fail(call, f"cannot reshape {fmt_shape(data)} ({total} elements) to "
                                 f"{tuple(target)}: {total} is not a multiple of {known}")
        target[holes[0]] = su.floordiv(total, known)
    return tuple(target)


def _infer_reshape(call: Call) -> StructInfo:
    data = tensor_arg(call, 0)
    shape = _shape_arg(call, 1)
    if shape.values is None:
        return TensorStructInfo(None, data.dtype, shape.ndim)
    for d in shape.values:
        if isinstance(d, int) and d < -1:
            raise fail(call, f"invalid dim {d} in the new shape {shape.values}")
    out = resolve_reshape(call, data, shape.values)
    if out is None:
        return TensorStructInfo(None, data.dtype, len(shape.values))
    if data.shape is not None:
        a, b = su.product(data.shape), su.product(out)
        if su.known_unequal(a, b):
            raise fail(call, f"cannot reshape {fmt_shape(data)} ({a} elements) to "
                             f"{tuple(out)} ({b} elements)")
    return TensorStructInfo(out, data.dtype)


def _infer_flatten(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    if s.shape is None:
        return TensorStructInfo(None, s.dtype, 1)
    return TensorStructInfo((su.product(s.shape),), s.dtype)


def _infer_permute(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    axes = call.attrs.axes
    if s.ndim < 0:
        return TensorStructInfo(None, s.dtype, -1 if axes is None else len(axes))
    if axes is None:
        axes = tuple(reversed(range(s.ndim)))
    if len(axes) != s.ndim:
        raise fail(call, f"axes {axes} must name each of the {s.ndim} dims once")
    axes = axes_of(call, axes, s.ndim)
    if s.shape is None:
        return TensorStructInfo(None, s.dtype, s.ndim)
    return TensorStructInfo(tuple(s.shape[a] for a in axes), s.dtype)


def _infer_concat(call: Call) -> StructInfo:
    t = call.args[0].struct_info
    if not isinstance(t, TupleStructInfo):
        raise fail(call, f"tensors must be a tuple of tensors, got {t}")
    if not t.fields:
        raise fail(call, "needs at least one tensor")
    infos = []
    for i, f in enumerate(t.fields):
        if not isinstance(f, TensorStructInfo):
            raise fail(call, f"tensors[{i}] must be a tensor, got {f}")
        infos.append(f)
    dtypes = {s.dtype for s in infos} - {"void"}
    if len(dtypes) > 1:
        raise fail(call, f"tensors have different dtypes {sorted(dtypes)}")
    dtype = dtypes.pop() if dtypes else "void"
    ndims = {s.ndim for s in infos} - {-1}
    if len(ndims) > 1:
        raise fail(call, f"tensors have different numbers of dims {sorted(ndims)}")
    if not ndims:
        return TensorStructInfo(None, dtype)
    ndim = ndims.pop()
    axis = axis_of(call, call.attrs.axis, ndim)
    if any(s.shape is None for s in infos):
        return TensorStructInfo(None, dtype, ndim)
    out: List = list(infos[0].shape)
    for i, s in enumerate(infos[1:], 1):
        for d in range(ndim):
            if d == axis:
                out[d] = su.add(out[d], s.shape[d])
            elif su.known_unequal(out[d], s.shape[d]):
                raise fail(call, f"tensors[{i}] has shape {fmt_shape(s)} but tensors[0] has "
                                 f"{fmt_shape(infos[0])}: dim {d} differs (only axis {axis} "
                                 "may)")
    return TensorStructInfo(tuple(out), dtype)


def _infer_split(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    ios = call.attrs.indices_or_sections
    n = ios if isinstance(ios, int) else len(ios) + 1
    if isinstance(ios, int) and ios < 1:
        raise fail(call, f"sections must be >= 1, got {ios}")
    if s.ndim < 0:
        return TupleStructInfo([TensorStructInfo(None, s.dtype)] * n)
    axis = axis_of(call, call.attrs.axis, s.ndim)
    if s.shape is None:
        return TupleStructInfo([TensorStructInfo(None, s.dtype, s.ndim)] * n)
    d = s.shape[axis]
    if isinstance(ios, int):
        if isinstance(d, int) and d % ios:
            raise fail(call, f"axis {axis} of size {d} does not split into {ios} equal sections")
        sizes = [su.floordiv(d, ios)] * ios
    else:
        bounds = [0] + list(ios) + [d]
        sizes = []
        for lo, hi in zip(bounds, bounds[1:]):
            if isinstance(d, int):
                lo, hi = min(max(lo, 0), d), min(max(hi, 0), d)
                sizes.append(max(hi - lo, 0))
            else:
                sizes.append(su.sub(hi, lo))
    out = []
    for size in sizes:
        shape = list(s.shape)
        shape[axis] = size
        out.append(TensorStructInfo(tuple(shape), s.dtype))
    return TupleStructInfo(out)


def _infer_squeeze(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    axis = call.attrs.axis
    if s.ndim < 0:
        return TensorStructInfo(None, s.dtype)
    if s.shape is None:
        return TensorStructInfo(None, s.dtype, -1 if axis is None else s.ndim - len(axis))
    if axis is None:
        if any(not isinstance(d, int) for d in s.shape):
            return TensorStructInfo(None, s.dtype)
        return TensorStructInfo(tuple(d for d in s.shape if d != 1), s.dtype)
    axes = axes_of(call, axis, s.ndim)
    for a in axes:
        if su.known_unequal(s.shape[a], 1):
            raise fail(call, f"cannot squeeze axis {a} of size {s.shape[a]} (only size-1 axes)")
    return TensorStructInfo(tuple(d for i, d in enumerate(s.shape) if i not in axes), s.dtype)


def _infer_expand_dims(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    if s.ndim < 0:
        return TensorStructInfo(None, s.dtype)
    ndim = s.ndim + len(call.attrs.axis)
    axes = axes_of(call, call.attrs.axis, ndim)
    if s.shape is None:
        return TensorStructInfo(None, s.dtype, ndim)
    dims = iter(s.shape)
    return TensorStructInfo(tuple(1 if i in axes else next(dims) for i in range(ndim)), s.dtype)


def _infer_broadcast_to(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    shape = _shape_arg(call, 1)
    if shape.values is None:
        return TensorStructInfo(None, s.dtype, shape.ndim)
    if s.shape is not None:
        if s.ndim > len(shape.values):
            raise fail(call, f"cannot broadcast {fmt_shape(s)} to fewer dims {shape.values}")
        for i in range(1, s.ndim + 1):
            a, b = s.shape[-i], shape.values[-i]
            if su.known_unequal(a, b) and a != 1:
                raise fail(call, f"cannot broadcast {fmt_shape(s)} to {shape.values}: dim {-i} "
                                 f"is {a} vs {b}")
    return TensorStructInfo(shape.values, s.dtype)


register("relax.reshape", _infer_reshape, ("x", "shape"), pattern=INJECTIVE)
register("relax.flatten", _infer_flatten, ("x",), pattern=INJECTIVE)
register("relax.permute_dims", _infer_permute, ("x",), {"axes": None}, pattern=INJECTIVE)
register("relax.concat", _infer_concat, ("tensors",), {"axis": 0}, pattern=INJECTIVE)
register("relax.split", _infer_split, ("x",), {"indices_or_sections": 1, "axis": 0})
register("relax.squeeze", _infer_squeeze, ("x",), {"axis": None}, pattern=INJECTIVE)
register("relax.expand_dims", _infer_expand_dims, ("x",), {"axis": ()}, pattern=INJECTIVE)
register("relax.broadcast_to", _infer_broadcast_to, ("x", "shape"), pattern=INJECTIVE)


def as_shape_expr(shape) -> Expr:
    if isinstance(shape, Expr):
        return shape
    if isinstance(shape, int):
        shape = (shape,)
    return ShapeExpr(tuple(as_dim(d) for d in shape))


def reshape(x, shape) -> Call:
    """`x` with a new shape; -1 is inferred from the element count and 0 copies the input's
    dim at that position (both resolved at once when x's shape is known)."""
    shape = as_shape_expr(shape)
    if isinstance(shape, ShapeExpr) and isinstance(x, Expr):
        s = x.struct_info
        if isinstance(s, TensorStructInfo):
            resolved = resolve_reshape(make_call("relax.reshape", (x, shape)), s, shape.values)
            if resolved is not None:
                shape = ShapeExpr(resolved)
    return make_call("relax.reshape", (x, shape))


def flatten(x) -> Call:
    """`x` as a 1-D tensor (as TVM's relax.op.flatten; reshape(x, (0, -1)) keeps the batch)."""
    return make_call("relax.flatten", (x,))


def permute_dims(x, axes=None) -> Call:
    """Transpose: output dim i is input dim axes[i] (None reverses the dims)."""
    return make_call("relax.permute_dims", (x,),
                     axes=None if axes is None else tuple(int(a) for a in axes))


def concat(tensors, axis: int = 0) -> Call:
    if not isinstance(tensors, Expr):
        tensors = Tuple(tuple(tensors))
    return make_call("relax.concat", (tensors,), axis=int(axis))


def split(x, indices_or_sections, axis: int = 0) -> Call:
    """A tuple of pieces of `x` along `axis`: an int gives that many equal sections, a list
    gives the indices where the pieces start."""
    ios = indices_or_sections
    ios = int(ios) if isinstance(ios, int) else tuple(int(i) for i in ios)
    return make_call("relax.split", (x,), indices_or_sections=ios, axis=int(axis))


def squeeze(x, axis=None) -> Call:
    """`x` without the given size-1 axes (None: every size-1 axis)."""
    if axis is not None:
        axis = (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)
    return make_call("relax.squeeze", (x,), axis=axis)


def expand_dims(x, axis) -> Call:
    """`x` with size-1 axes inserted at the given positions of the output."""
    axis = (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)
    return make_call("relax.expand_dims", (x,), axis=axis)


def broadcast_to(x, shape) -> Call:
    return make_call("relax.broadcast_to", (x, as_shape_expr(shape)))
