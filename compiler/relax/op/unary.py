"""Elementwise unary operators: exp, log, sqrt, rsqrt, sigmoid, tanh, erf, sin, cos, tan
(float tensors only) and abs, negative, floor, ceil, round, sign, square, logical_not,
isnan; plus clip(x, min, max). The result has the input's shape and dtype (bool for
logical_not and isnan)."""
from __future__ import annotations

from typing import Any

from ..expr import Call, PrimValue
from ..struct_info import PrimStructInfo, StructInfo, TensorStructInfo
from .pattern import ELEMWISE
from .registry import check_arity, fail, float_dtype, make_call, register, tensor_arg

FLOAT_ONLY = ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos", "tan")
ANY_DTYPE = ("abs", "negative", "floor", "ceil", "round", "sign", "square")


def infer_unary(float_only: bool = False, result_dtype=None):
    def infer(call: Call) -> StructInfo:
        s = tensor_arg(call, 0)
        if float_only:
            float_dtype(call, 0, s)
        dtype = result_dtype or s.dtype
        return TensorStructInfo(s.shape, dtype, s.ndim)
    return infer


for _n in FLOAT_ONLY:
    register("relax." + _n, infer_unary(True), ("x",), pattern=ELEMWISE)
for _n in ANY_DTYPE:
    register("relax." + _n, infer_unary(), ("x",), pattern=ELEMWISE)
register("relax.logical_not", infer_unary(result_dtype="bool"), ("x",), pattern=ELEMWISE)
register("relax.isnan", infer_unary(result_dtype="bool"), ("x",), pattern=ELEMWISE)


def _infer_clip(call: Call) -> StructInfo:
    check_arity(call, 3)
    for i in (1, 2):
        if not isinstance(call.args[i].struct_info, PrimStructInfo):
            raise fail(call, f"{('min', 'max')[i - 1]} must be a scalar (R.prim_value), got "
                             f"{call.args[i].struct_info}")
    return infer_unary()(call)


register("relax.clip", _infer_clip, ("x", "min", "max"), pattern=ELEMWISE)


def _make(name):
    def build(x) -> Call:
        return make_call("relax." + name, (x,))
    build.__name__ = name
    build.__doc__ = f"Elementwise `{name}`."
    return build


exp = _make("exp")
log = _make("log")
sqrt = _make("sqrt")
rsqrt = _make("rsqrt")
sigmoid = _make("sigmoid")
tanh = _make("tanh")
erf = _make("erf")
sin = _make("sin")
cos = _make("cos")
tan = _make("tan")
abs = _make("abs")  # noqa: A001 - the TVM name
negative = _make("negative")
floor = _make("floor")
ceil = _make("ceil")
round = _make("round")  # noqa: A001 - the TVM name
sign = _make("sign")
square = _make("square")
logical_not = _make("logical_not")
isnan = _make("isnan")


def _prim(value: Any, like: Call | Any) -> PrimValue:
    if isinstance(value, PrimValue):
        return value
    s = like.struct_info
    dtype = s.dtype if isinstance(s, TensorStructInfo) and s.dtype != "void" else ""
    return PrimValue(float(value) if dtype.startswith("float") else value, dtype)


def clip(x, min, max) -> Call:  # noqa: A002 - the TVM names
    """`x` clamped to [min, max] (Python numbers or PrimValues, in x's dtype)."""
    return make_call("relax.clip", (x, _prim(min, x), _prim(max, x)))
