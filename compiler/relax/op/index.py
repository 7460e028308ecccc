"""Indexing: take (gather along an axis, numpy.take; negative indices count from the end) and
strided_slice (numpy slicing semantics on the given axes: negative begin/end count from the
end, out-of-range values are clamped, strides may be negative). A begin or end may be a
symbolic dim (an int64 expression of the model's dims, taken as non-negative; the stride then
positive): clamped to the dim at run time, or used as it is with `assume_inbound` (which
applies to the axes whose dim or bounds are symbolic)."""
from __future__ import annotations

from typing import Optional

from ...tir import expr as E
from .. import shape_util as su
from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo
from .pattern import INJECTIVE
from .registry import axes_of, axis_of, fail, make_call, register, tensor_arg


def _infer_take(call: Call) -> StructInfo:
    x, idx = tensor_arg(call, 0), tensor_arg(call, 1)
    if idx.dtype != "void" and not idx.dtype.startswith(("int", "uint")):
        raise fail(call, f"indices must be an integer tensor, got {idx.dtype}")
    axis = call.attrs.axis
    if axis is None:
        return TensorStructInfo(idx.shape, x.dtype, idx.ndim)
    if x.ndim < 0 or idx.ndim < 0:
        return TensorStructInfo(None, x.dtype)
    a = axis_of(call, axis, x.ndim)
    if x.shape is None or idx.shape is None:
        return TensorStructInfo(None, x.dtype, x.ndim - 1 + idx.ndim)
    return TensorStructInfo(x.shape[:a] + idx.shape + x.shape[a + 1:], x.dtype)


def slice_len(dim: int, begin: int, end: int, stride: int) -> int:
    """len(range(dim)[begin:end:stride])."""
    return len(range(dim)[begin:end:stride])


def _symbolic_len(n, begin, end, stride: int, inbound: bool = False) -> Optional[object]:
    """The slice length on a dim `n` (int or symbolic) for a positive stride, when the dim or a
    bound is symbolic (a symbolic bound is non-negative; `inbound`: the bounds are used as
    they are)."""
    if stride < 0:
        return None
    n = su.dim_expr(n)
    zero = E.const(0, "int64")

    def clamp(v):
        if isinstance(v, E.PrimExpr):
            return v if inbound else E.binary(E.Min, v, n)
        if v >= 2 ** 31:    # INT64_MAX and the like: the end
            return n
        if v <= -2 ** 31:
            return zero
        c = E.const(v, "int64")
        if v >= 0:
            return c if inbound else E.binary(E.Min, c, n)
        return n + c if inbound else E.binary(E.Max, n + c, zero)

    length = clamp(end) - clamp(begin)
    if not inbound:
        length = E.binary(E.Max, length, zero)
    return su.ceildiv(su.norm(length), stride)


def _infer_strided_slice(call: Call) -> StructInfo:
    x = tensor_arg(call, 0)
    a = call.attrs
    n = len(a.axes)
    if len(a.begin) != n or len(a.end) != n or (a.strides and len(a.strides) != n):
        raise fail(call, f"axes {a.axes}, begin {a.begin}, end {a.end} and strides "
                         f"{a.strides} must have the same length")
    strides = a.strides or (1,) * n
    if any(s == 0 for s in strides):
        raise fail(call, f"strides {strides} must not be 0")
    if x.ndim < 0:
        return TensorStructInfo(None, x.dtype)
    axes = axes_of(call, a.axes, x.ndim)
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    out = list(x.shape)
    for ax, b, e, s in zip(axes, a.begin, a.end, strides):
        d = x.shape[ax]
        symbolic = isinstance(b, E.PrimExpr) or isinstance(e, E.PrimExpr)
        if symbolic and s < 0:
            raise fail(call, f"a symbolic begin or end ({b}, {e}) needs a positive stride, got "
                             f"{s}")
        if isinstance(d, int) and not symbolic:
            out[ax] = slice_len(d, b, e, s)
        else:
            length = _symbolic_len(d, b, e, s, bool(a.assume_inbound))
            if length is None:
                return TensorStructInfo(None, x.dtype, x.ndim)
            out[ax] = length
    return TensorStructInfo(tuple(out), x.dtype)


register("relax.take", _infer_take, ("x", "indices"), {"axis": None, "mode": "fast"},
         pattern=INJECTIVE)
register("relax.strided_slice", _infer_strided_slice, ("x",),
         {"axes": (), "begin": (), "end": (), "strides": None, "assume_inbound": False},
         pattern=INJECTIVE)


def take(x, indices, axis=None, mode: str = "fast") -> Call:
    """Gather: out[i..., j..., k...] = x[i..., indices[j...], k...] on `axis` (None: x is
    flattened first)."""
    return make_call("relax.take", (x, indices), axis=None if axis is None else int(axis),
                     mode=mode)


def _bound(v):
    return su.norm(v) if isinstance(v, E.PrimExpr) else int(v)


def strided_slice(x, axes, begin, end, strides=None, assume_inbound: bool = False) -> Call:
    """x[begin:end:stride] on each of `axes` (numpy semantics; INT64_MAX / INT64_MIN mean the
    ends). A begin or end may be a symbolic dim (non-negative, with a positive stride): it is
    clamped to the dim, unless `assume_inbound` (0 <= begin <= end <= dim holds at run
    time)."""
    return make_call("relax.strided_slice", (x,), axes=tuple(int(v) for v in axes),
                     begin=tuple(_bound(v) for v in begin), end=tuple(_bound(v) for v in end),
                     strides=None if strides is None else tuple(int(v) for v in strides),
                     assume_inbound=bool(assume_inbound))
