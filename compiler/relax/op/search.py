"""argmax / argmin (int64 indices, over one axis or the flattened tensor) and where."""
from __future__ import annotations

import builtins

from .. import shape_util as su
from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo
from .binary import broadcast_sinfo
from .pattern import BROADCAST, COMM_REDUCE
from .registry import fail, make_call, register, same_dtype, tensor_arg
from .statistical import reduce_sinfo


def _infer_arg(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    axis = call.attrs.axis
    return reduce_sinfo(call, s, None if axis is None else (axis,), call.attrs.keepdims,
                        "int64")


def _infer_where(call: Call) -> StructInfo:
    c, a, b = tensor_arg(call, 0), tensor_arg(call, 1), tensor_arg(call, 2)
    if c.dtype not in ("bool", "void"):
        raise fail(call, f"condition must be a bool tensor, got {c.dtype}")
    dtype = same_dtype(call, 1, a, 2, b)
    ab = broadcast_sinfo(call, 1, a, 2, b, dtype)
    ndim = -1 if c.ndim < 0 or ab.ndim < 0 else builtins.max(c.ndim, ab.ndim)
    if ab.shape is None or c.shape is None:
        return TensorStructInfo(None, dtype, ndim)
    try:
        shape, _ = su.broadcast(c.shape, ab.shape)
    except ValueError:
        raise fail(call, f"cannot broadcast condition of shape {c.shape} with the values' "
                         f"shape {ab.shape}") from None
    return TensorStructInfo(shape, dtype, ndim)


register("relax.argmax", _infer_arg, ("x",), {"axis": None, "keepdims": False}, pattern=COMM_REDUCE)
register("relax.argmin", _infer_arg, ("x",), {"axis": None, "keepdims": False}, pattern=COMM_REDUCE)
register("relax.where", _infer_where, ("condition", "x1", "x2"), pattern=BROADCAST)


def argmax(x, axis=None, keepdims: bool = False) -> Call:
    return make_call("relax.argmax", (x,), axis=None if axis is None else int(axis),
                     keepdims=bool(keepdims))


def argmin(x, axis=None, keepdims: bool = False) -> Call:
    return make_call("relax.argmin", (x,), axis=None if axis is None else int(axis),
                     keepdims=bool(keepdims))


def where(condition, x1, x2) -> Call:
    """`x1` where `condition` else `x2`, all three broadcast together."""
    return make_call("relax.where", (condition, x1, x2))
