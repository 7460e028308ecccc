"""layout_transform: a tensor from one data layout to another ("NCHW" <-> "NCHW8c", "OIHW" ->
"OIHW8i8o"; the notation of compiler.topi.nn.layout). The blocked layouts are what the CPU
convolution kernels take; a graph pass (convert_layout_nchwc) puts these transforms at the
borders of the regions it converts."""
from __future__ import annotations

from ...ir.errors import IRError, TypeInferenceError
from ...topi.nn.layout import parse_layout, transform_shape
from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo
from .pattern import INJECTIVE
from .registry import fail, make_call, register, tensor_arg


def _infer(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    a = call.attrs
    try:
        src, dst = parse_layout(a.src_layout), parse_layout(a.dst_layout)
        if s.ndim not in (-1, len(src)):
            raise fail(call, f"data has {s.ndim} dims but layout {a.src_layout!r} has "
                             f"{len(src)}")
        if s.shape is None:
            return TensorStructInfo(None, s.dtype, len(dst))
        if not all(isinstance(d, int) for d in s.shape):
            raise fail(call, f"needs a static shape, got {s.shape}")
        return TensorStructInfo(transform_shape(s.shape, a.src_layout, a.dst_layout), s.dtype)
    except TypeInferenceError:
        raise
    except IRError as e:
        raise fail(call, str(e)) from None


register("relax.layout_transform", _infer, ("data",), {"src_layout": "", "dst_layout": ""},
         pattern=INJECTIVE)


def layout_transform(data, src_layout: str, dst_layout: str) -> Call:
    """`data` (in `src_layout`) rearranged into `dst_layout`."""
    return make_call("relax.layout_transform", (data,), src_layout=src_layout,
                     dst_layout=dst_layout)
