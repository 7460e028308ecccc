"""nn.dense: `data @ weight.T` with weight (units, in_features), data (..., in_features)."""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
from ..pattern import OUT_ELEMWISE_FUSABLE
from ..registry import fail, fmt_shape, make_call, register, same_dtype, tensor_arg


def _infer_dense(call: Call) -> StructInfo:
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    if weight.ndim not in (-1, 2):
        raise fail(call, f"weight must be 2-D (units, in_features), got {weight.ndim} dims")
    if data.ndim == 0:
        raise fail(call, "data must have at least 1 dim")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, data.ndim)
    if su.known_unequal(data.shape[-1], weight.shape[1]):
        raise fail(call, f"data {fmt_shape(data)} has {data.shape[-1]} features but weight "
                         f"{fmt_shape(weight)} expects {weight.shape[1]}")
    return TensorStructInfo(data.shape[:-1] + (weight.shape[0],), out_dtype)


register("relax.nn.dense", _infer_dense, ("data", "weight"), {"out_dtype": "void"},
         pattern=OUT_ELEMWISE_FUSABLE)


def dense(data, weight, out_dtype=None) -> Call:
    """`data @ weight.T` (weight is (units, in_features))."""
    return make_call("relax.nn.dense", (data, weight), out_dtype=as_dtype_str(out_dtype))
