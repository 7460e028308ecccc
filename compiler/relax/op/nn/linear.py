"""nn.dense: `data @ weight.T` with weight (units, in_features), data (..., in_features); and
the pair a CPU build makes of a dense (or matmul) by a constant weight (pack_dense_weight):
nn.contrib_dense_pack_weight_transform, the weight in column panels [ceil(units / b),
in_features, b] (TVM's "NK{b}n"), and nn.contrib_dense_pack, the product by such a weight."""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
from ..pattern import OPAQUE, OUT_ELEMWISE_FUSABLE
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


def _infer_dense_pack(call: Call) -> StructInfo:
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    units = call.attrs.units
    if weight.ndim not in (-1, 3):
        raise fail(call, f"weight must be packed [units / b, in_features, b] (3-D), got "
                         f"{weight.ndim} dims")
    if data.ndim == 0:
        raise fail(call, "data must have at least 1 dim")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, data.ndim)
    panels, k, block = weight.shape
    if not isinstance(units, int) or units < 1 or (
            isinstance(panels, int) and isinstance(block, int) and panels != -(-units // block)):
        raise fail(call, f"units={units} does not match the packed weight {fmt_shape(weight)}")
    if su.known_unequal(data.shape[-1], k):
        raise fail(call, f"data {fmt_shape(data)} has {data.shape[-1]} features but weight "
                         f"{fmt_shape(weight)} expects {k}")
    return TensorStructInfo(data.shape[:-1] + (units,), out_dtype)


def _infer_dense_pack_weight(call: Call) -> StructInfo:
    weight = tensor_arg(call, 0)
    a = call.attrs
    if weight.ndim not in (-1, 2) or a.weight_layout not in ("NK", "KN") or a.block < 1:
        raise fail(call, f"needs a 2-D weight in layout NK or KN and a block >= 1, got "
                         f"{weight.ndim} dims, {a.weight_layout!r}, block {a.block}")
    if weight.shape is None:
        return TensorStructInfo(None, weight.dtype, 3)
    n, k = weight.shape if a.weight_layout == "NK" else weight.shape[::-1]
    if not isinstance(n, int):
        raise fail(call, f"needs a static number of units, got {fmt_shape(weight)}")
    return TensorStructInfo((-(-n // a.block), k, a.block), weight.dtype)


register("relax.nn.contrib_dense_pack", _infer_dense_pack, ("data", "weight"),
         {"units": 0, "out_dtype": "void"}, pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.contrib_dense_pack_weight_transform", _infer_dense_pack_weight, ("weight",),
         {"block": 32, "weight_layout": "NK"}, pattern=OPAQUE)


def contrib_dense_pack(data, weight, units: int, out_dtype=None) -> Call:
    """`data @ W.T` for W [units, in_features] given packed as [ceil(units / b), in_features,
    b] (contrib_dense_pack_weight_transform)."""
    return make_call("relax.nn.contrib_dense_pack", (data, weight), units=int(units),
                     out_dtype=as_dtype_str(out_dtype))


def contrib_dense_pack_weight_transform(weight, block: int, weight_layout: str = "NK") -> Call:
    """`weight` (dense's [units, in_features]: "NK", or matmul's B [in_features, units]: "KN")
    in column panels of `block`: [ceil(units / block), in_features, block], zero-padded."""
    return make_call("relax.nn.contrib_dense_pack_weight_transform", (weight,),
                     block=int(block), weight_layout=weight_layout)
