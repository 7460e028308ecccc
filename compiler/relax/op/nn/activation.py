"""Activations: relu, leakyrelu(alpha), prelu(x, alpha, axis), gelu (erf form), gelu_tanh,
silu, softmax(axis) and log_softmax(axis). All keep the input's shape and dtype."""
from __future__ import annotations

from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo
from ..pattern import BROADCAST, ELEMWISE
from ..registry import axis_of, fail, float_dtype, make_call, register, same_dtype, tensor_arg
from ..unary import infer_unary


def _infer_axis(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    float_dtype(call, 0, s)
    if s.ndim >= 0:
        axis_of(call, call.attrs.axis, s.ndim)
    return TensorStructInfo(s.shape, s.dtype, s.ndim)


def _infer_prelu(call: Call) -> StructInfo:
    s, a = tensor_arg(call, 0), tensor_arg(call, 1)
    same_dtype(call, 0, s, 1, a)
    if s.ndim >= 0:
        axis = axis_of(call, call.attrs.axis, s.ndim)
        if a.ndim not in (-1, 1):
            raise fail(call, f"alpha must be 1-D (one slope per channel), got {a.ndim} dims")
        if s.shape is not None and a.shape is not None:
            c, k = s.shape[axis], a.shape[0]
            if isinstance(c, int) and isinstance(k, int) and k not in (1, c):
                raise fail(call, f"alpha has {k} values but x has {c} channels on axis {axis}")
    return TensorStructInfo(s.shape, s.dtype, s.ndim)


register("relax.nn.relu", infer_unary(), ("data",), pattern=ELEMWISE)
register("relax.nn.leakyrelu", infer_unary(True), ("data",), {"alpha": 0.01}, pattern=ELEMWISE)
register("relax.nn.prelu", _infer_prelu, ("data", "alpha"), {"axis": 1}, pattern=BROADCAST)
register("relax.nn.gelu", infer_unary(True), ("data",), pattern=ELEMWISE)
register("relax.nn.gelu_tanh", infer_unary(True), ("data",), pattern=ELEMWISE)
register("relax.nn.silu", infer_unary(True), ("data",), pattern=ELEMWISE)
register("relax.nn.softmax", _infer_axis, ("data",), {"axis": -1})
register("relax.nn.log_softmax", _infer_axis, ("data",), {"axis": -1})


def relu(data) -> Call:
    return make_call("relax.nn.relu", (data,))


def leakyrelu(data, alpha: float = 0.01) -> Call:
    """`x if x > 0 else alpha * x`."""
    return make_call("relax.nn.leakyrelu", (data,), alpha=float(alpha))


def prelu(data, alpha, axis: int = 1) -> Call:
    """Leaky relu with a learned slope per channel of `axis` (`alpha` is 1-D)."""
    return make_call("relax.nn.prelu", (data, alpha), axis=int(axis))


def gelu(data) -> Call:
    """`0.5 * x * (1 + erf(x / sqrt(2)))`."""
    return make_call("relax.nn.gelu", (data,))


def gelu_tanh(data) -> Call:
    """The tanh approximation of gelu."""
    return make_call("relax.nn.gelu_tanh", (data,))


def silu(data) -> Call:
    """`x * sigmoid(x)`."""
    return make_call("relax.nn.silu", (data,))


def softmax(data, axis: int = -1) -> Call:
    return make_call("relax.nn.softmax", (data,), axis=int(axis))


def log_softmax(data, axis: int = -1) -> Call:
    return make_call("relax.nn.log_softmax", (data,), axis=int(axis))
