"""Elementwise binary operators with numpy broadcasting: arithmetic (add, subtract, multiply,
divide, floor_divide, power, maximum, minimum, mod), comparisons (equal, not_equal, less,
less_equal, greater, greater_equal: bool results) and logical_and / logical_or. Both operands
must have the same dtype (cast with `astype`); a Python number operand becomes a scalar
constant of the other operand's dtype."""
from __future__ import annotations

from typing import Any

from .. import shape_util
from ..expr import Call, Expr, lift_operand
from ..struct_info import StructInfo, TensorStructInfo
from .pattern import BROADCAST
from .registry import fail, fmt_shape, make_call, register, same_dtype, tensor_arg


def broadcast_sinfo(call: Call, i: int, a: TensorStructInfo, j: int, b: TensorStructInfo,
                    dtype: str) -> TensorStructInfo:
    """The struct info of broadcasting arguments i and j to `dtype`."""
    if a.shape is None or b.shape is None:
        ndim = max(a.ndim, b.ndim) if a.ndim >= 0 and b.ndim >= 0 else -1
        return TensorStructInfo(None, dtype, ndim)
    try:
        shape, _ = shape_util.broadcast(a.shape, b.shape)
    except ValueError as e:
        k = e.args[0]
        raise fail(call, f"cannot broadcast {_name(call, i)} of shape {fmt_shape(a)} with "
                         f"{_name(call, j)} of shape {fmt_shape(b)}: dim {-k} is "
                         f"{a.shape[-k]} vs {b.shape[-k]}") from None
    if shape is None:
        return TensorStructInfo(None, dtype, max(a.ndim, b.ndim))
    return TensorStructInfo(shape, dtype)


def _name(call: Call, i: int) -> str:
    names = call.op.get_attr("arg_names")
    return names[i]


def _infer(result_dtype=None):
    def infer(call: Call) -> StructInfo:
        a, b = tensor_arg(call, 0), tensor_arg(call, 1)
        dtype = same_dtype(call, 0, a, 1, b)
        return broadcast_sinfo(call, 0, a, 1, b, result_dtype or dtype)
    return infer


ARITHMETIC = ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum",
              "minimum", "mod", "floor_mod")
COMPARISON = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
LOGICAL = ("logical_and", "logical_or", "logical_xor")

for _n in ARITHMETIC:
    register("relax." + _n, _infer(), ("x1", "x2"), pattern=BROADCAST)
for _n in COMPARISON + LOGICAL:
    register("relax." + _n, _infer("bool"), ("x1", "x2"), pattern=BROADCAST)


def _operands(x1: Any, x2: Any):
    if not isinstance(x1, Expr) and isinstance(x2, Expr):
        return lift_operand(x1, x2), x2
    if isinstance(x1, Expr):
        return x1, lift_operand(x2, x1)
    raise TypeError("at least one operand must be a graph-level expression")


def _make(name):
    def build(x1, x2) -> Call:
        a, b = _operands(x1, x2)
        return make_call("relax." + name, (a, b))
    build.__name__ = name
    build.__doc__ = f"Elementwise `{name}` with numpy broadcasting."
    return build


add = _make("add")
subtract = _make("subtract")
multiply = _make("multiply")
divide = _make("divide")
floor_divide = _make("floor_divide")
power = _make("power")
maximum = _make("maximum")
minimum = _make("minimum")
mod = _make("mod")
floor_mod = _make("floor_mod")
equal = _make("equal")
not_equal = _make("not_equal")
less = _make("less")
less_equal = _make("less_equal")
greater = _make("greater")
greater_equal = _make("greater_equal")
logical_and = _make("logical_and")
logical_or = _make("logical_or")
logical_xor = _make("logical_xor")
