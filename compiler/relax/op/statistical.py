"""Reductions over axes (None: all) with keepdims: sum, mean, max, min, prod, variance, std."""
from __future__ import annotations

from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo
from .pattern import COMM_REDUCE
from .registry import axes_of, float_dtype, make_call, register, tensor_arg


def reduce_sinfo(call: Call, s: TensorStructInfo, axis, keepdims: bool,
                 dtype: str) -> TensorStructInfo:
    if s.ndim < 0:
        return TensorStructInfo(None, dtype, 0 if axis is None and not keepdims else -1)
    axes = tuple(range(s.ndim)) if axis is None else axes_of(call, axis, s.ndim)
    ndim = s.ndim if keepdims else s.ndim - len(axes)
    if s.shape is None:
        return TensorStructInfo(None, dtype, ndim)
    out = tuple(1 if i in axes else d for i, d in enumerate(s.shape)
                if keepdims or i not in axes)
    return TensorStructInfo(out, dtype)


def _infer(float_only: bool):
    def infer(call: Call) -> StructInfo:
        s = tensor_arg(call, 0)
        if float_only:
            float_dtype(call, 0, s)
        return reduce_sinfo(call, s, call.attrs.axis, call.attrs.keepdims, s.dtype)
    return infer


for _n, _f in (("sum", False), ("mean", True), ("max", False), ("min", False),
               ("prod", False), ("variance", True), ("std", True)):
    register("relax." + _n, _infer(_f), ("x",), {"axis": None, "keepdims": False},
             pattern=COMM_REDUCE)


def norm_axis(axis):
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


def _make(name):
    def build(x, axis=None, keepdims: bool = False) -> Call:
        return make_call("relax." + name, (x,), axis=norm_axis(axis), keepdims=bool(keepdims))
    build.__name__ = name
    build.__doc__ = f"`{name}` over `axis` (an int, a list, or None for all)."
    return build


sum = _make("sum")  # noqa: A001 - the TVM name
mean = _make("mean")
max = _make("max")  # noqa: A001 - the TVM name
min = _make("min")  # noqa: A001 - the TVM name
prod = _make("prod")
variance = _make("variance")
std = _make("std")
