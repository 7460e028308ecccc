"""Tensor creation: zeros, ones, full (shape and dtype given), zeros_like, ones_like, full_like
(shape of another tensor) and arange."""
from __future__ import annotations

import math

from ...tir import expr as E
from .. import shape_util as su
from ..expr import Call, PrimValue
from ..struct_info import ShapeStructInfo, StructInfo, TensorStructInfo, as_dtype_str
from .manipulate import as_shape_expr
from .pattern import INJECTIVE
from .registry import fail, make_call, register, tensor_arg


def _infer_filled(call: Call) -> StructInfo:
    s = call.args[0].struct_info
    if not isinstance(s, ShapeStructInfo):
        raise fail(call, f"shape must be a shape (R.shape([...])), got {s}")
    return TensorStructInfo(s.values, call.attrs.dtype, s.ndim)


def _infer_like(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    dtype = call.attrs.dtype if call.attrs.dtype != "void" else s.dtype
    return TensorStructInfo(s.shape, dtype, s.ndim)


def _infer_arange(call: Call) -> StructInfo:
    a = call.attrs
    if isinstance(a.step, E.PrimExpr) or a.step == 0:
        raise fail(call, f"step must be a non-zero number, got {a.step}")
    if isinstance(a.start, E.PrimExpr) or isinstance(a.end, E.PrimExpr):
        # symbolic bounds (integers): ceil((end - start) / step) elements, which must not be
        # negative at run time
        if not isinstance(a.step, int):
            raise fail(call, "symbolic start / end need an integer step")
        if a.step > 0:
            return TensorStructInfo((su.ceildiv(su.sub(a.end, a.start), a.step),), a.dtype)
        return TensorStructInfo((su.ceildiv(su.sub(a.start, a.end), -a.step),), a.dtype)
    n = max(0, math.ceil((a.end - a.start) / a.step))
    return TensorStructInfo((n,), a.dtype)


register("relax.zeros", _infer_filled, ("shape",), {"dtype": "float32"})
register("relax.ones", _infer_filled, ("shape",), {"dtype": "float32"})
register("relax.full", _infer_filled, ("shape", "fill_value"), {"dtype": "float32"})
register("relax.zeros_like", _infer_like, ("x",), {"dtype": "void"}, pattern=INJECTIVE)
register("relax.ones_like", _infer_like, ("x",), {"dtype": "void"}, pattern=INJECTIVE)
register("relax.full_like", _infer_like, ("x", "fill_value"), {"dtype": "void"}, pattern=INJECTIVE)
register("relax.arange", _infer_arange, (), {"start": 0, "end": 1, "step": 1,
                                             "dtype": "int64"})


def zeros(shape, dtype: str = "float32") -> Call:
    return make_call("relax.zeros", (as_shape_expr(shape),), dtype=as_dtype_str(dtype))


def ones(shape, dtype: str = "float32") -> Call:
    return make_call("relax.ones", (as_shape_expr(shape),), dtype=as_dtype_str(dtype))


def full(shape, fill_value, dtype: str = "float32") -> Call:
    fill = fill_value if isinstance(fill_value, PrimValue) else PrimValue(fill_value)
    return make_call("relax.full", (as_shape_expr(shape), fill), dtype=as_dtype_str(dtype))


def zeros_like(x, dtype=None) -> Call:
    return make_call("relax.zeros_like", (x,), dtype=as_dtype_str(dtype))


def ones_like(x, dtype=None) -> Call:
    return make_call("relax.ones_like", (x,), dtype=as_dtype_str(dtype))


def full_like(x, fill_value, dtype=None) -> Call:
    fill = fill_value if isinstance(fill_value, PrimValue) else PrimValue(fill_value)
    return make_call("relax.full_like", (x, fill), dtype=as_dtype_str(dtype))


def arange(start, end=None, step=1, dtype: str = "int64") -> Call:
    """[start, end) by step (numpy.arange); one argument is the end. start and end may be
    symbolic dims (int64 expressions) when step is an int: the result is filled at run
    time."""
    if end is None:
        start, end = 0, start
    return make_call("relax.arange", (), start=start, end=end, step=step,
                     dtype=as_dtype_str(dtype))
