"""Normalization: batch_norm (inference), layer_norm and lrn.

batch_norm returns what TVM's does, a 3-tuple (normalized data, moving_mean, moving_var):
`bn[0]` is the result; in inference (training=False) the statistics are the moving ones,
passed through unchanged.
"""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, TupleStructInfo
from ..registry import (
    arg_name,
    axes_of,
    axis_of,
    fail,
    float_dtype,
    make_call,
    register,
    same_dtype,
    tensor_arg,
)


def _check_param(call: Call, index: int, want: tuple, dtype: str) -> TensorStructInfo:
    p = tensor_arg(call, index)
    same_dtype(call, 0, TensorStructInfo(None, dtype), index, p)
    if p.ndim not in (-1, len(want)):
        raise fail(call, f"{arg_name(call, index)} must have {len(want)} dims "
                         f"{_fmt(want)}, got {p.ndim}")
    if p.shape is not None:
        for d, w in zip(p.shape, want):
            if w is not None and su.known_unequal(d, w):
                raise fail(call, f"{arg_name(call, index)} has shape {tuple(p.shape)} but data "
                                 f"needs {_fmt(want)}")
    return p


def _fmt(dims) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in dims) + \
        ("," if len(dims) == 1 else "") + ")"


def _infer_batch_norm(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    float_dtype(call, 0, s)
    if s.ndim < 0:
        c = None
    else:
        axis = axis_of(call, call.attrs.axis, s.ndim)
        c = s.shape[axis] if s.shape is not None else None
    for i in range(1, 5):
        _check_param(call, i, (c,), s.dtype)
    stat = TensorStructInfo((c,) if c is not None else None, s.dtype, 1)
    return TupleStructInfo([TensorStructInfo(s.shape, s.dtype, s.ndim), stat, stat])


def _infer_layer_norm(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    float_dtype(call, 0, s)
    if s.ndim >= 0:
        axes = axes_of(call, call.attrs.axes, s.ndim)
        want = tuple(s.shape[a] for a in axes) if s.shape is not None else (None,) * len(axes)
        for i in (1, 2):
            _check_param(call, i, want, s.dtype)
    return TensorStructInfo(s.shape, s.dtype, s.ndim)


def _infer_lrn(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    float_dtype(call, 0, s)
    if s.ndim >= 0:
        axis_of(call, call.attrs.axis, s.ndim)
    if call.attrs.size < 1:
        raise fail(call, f"size must be >= 1, got {call.attrs.size}")
    return TensorStructInfo(s.shape, s.dtype, s.ndim)


register("relax.nn.batch_norm", _infer_batch_norm,
         ("data", "gamma", "beta", "moving_mean", "moving_var"),
         {"axis": 1, "epsilon": 1e-5, "center": True, "scale": True, "momentum": 0.1,
          "training": False})
register("relax.nn.layer_norm", _infer_layer_norm, ("data", "gamma", "beta"),
         {"axes": (-1,), "epsilon": 1e-5, "center": True, "scale": True})
register("relax.nn.lrn", _infer_lrn, ("data",),
         {"size": 5, "axis": 1, "bias": 1.0, "alpha": 1e-4, "beta": 0.75})


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int = 1,
               epsilon: float = 1e-5, center: bool = True, scale: bool = True,
               momentum: float = 0.1, training: bool = False) -> Call:
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` over channel `axis`; returns the
    tuple (out, moving_mean, moving_var) (take `[0]`)."""
    return make_call("relax.nn.batch_norm", (data, gamma, beta, moving_mean, moving_var),
                     axis=int(axis), epsilon=float(epsilon), center=bool(center),
                     scale=bool(scale), momentum=float(momentum), training=bool(training))


def layer_norm(data, gamma, beta, axes=-1, epsilon: float = 1e-5, center: bool = True,
               scale: bool = True) -> Call:
    """Normalizes over `axes` (mean and biased variance), then `* gamma + beta` (their shape is
    the normalized dims)."""
    axes = (int(axes),) if isinstance(axes, int) else tuple(int(a) for a in axes)
    return make_call("relax.nn.layer_norm", (data, gamma, beta), axes=axes,
                     epsilon=float(epsilon), center=bool(center), scale=bool(scale))


def lrn(data, size: int = 5, axis: int = 1, bias: float = 1.0, alpha: float = 1e-4,
        beta: float = 0.75) -> Call:
    """Local response normalization across channels (ONNX LRN): `x / (bias + alpha / size *
    sum of x^2 over the size channels around c) ^ beta`, the window being
    [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    return make_call("relax.nn.lrn", (data,), size=int(size), axis=int(axis), bias=float(bias),
                     alpha=float(alpha), beta=float(beta))
