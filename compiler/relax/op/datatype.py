"""astype: elementwise conversion to another dtype."""
from __future__ import annotations

from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo, as_dtype_str
from .pattern import ELEMWISE
from .registry import make_call, register, tensor_arg


def _infer_astype(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    return TensorStructInfo(s.shape, call.attrs.dtype, s.ndim)


register("relax.astype", _infer_astype, ("x",), {"dtype": "float32"}, pattern=ELEMWISE)


def astype(x, dtype) -> Call:
    return make_call("relax.astype", (x,), dtype=as_dtype_str(dtype))
