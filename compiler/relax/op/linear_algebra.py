"""matmul (numpy semantics: 1-D operands, broadcasting batch dims) and linear (dense + bias)."""
from __future__ import annotations

from .. import shape_util as su
from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo, as_dtype_str
from .binary import add
from .nn.linear import dense
from .pattern import OUT_ELEMWISE_FUSABLE
from .registry import fail, fmt_shape, make_call, register, same_dtype, tensor_arg


def _infer_matmul(call: Call) -> StructInfo:
    a, b = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, a, 1, b)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    if a.ndim == 0 or b.ndim == 0:
        raise fail(call, "operands must have at least 1 dim (use multiply for scalars)")
    if a.shape is None or b.shape is None:
        if a.ndim < 0 or b.ndim < 0:
            return TensorStructInfo(None, out_dtype)
        ndim = max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1)
        return TensorStructInfo(None, out_dtype, max(ndim, 0))
    sa = a.shape if a.ndim > 1 else (1,) + a.shape
    sb = b.shape if b.ndim > 1 else b.shape + (1,)
    k1, k2 = sa[-1], sb[-2]
    if su.known_unequal(k1, k2):
        raise fail(call, f"x1 of shape {fmt_shape(a)} has {k1} columns but x2 of shape "
                         f"{fmt_shape(b)} has {k2} rows")
    try:
        batch, _ = su.broadcast(sa[:-2], sb[:-2])
    except ValueError as e:
        raise fail(call, f"cannot broadcast the batch dims of x1 {fmt_shape(a)} and x2 "
                         f"{fmt_shape(b)} (dim {-e.args[0] - 2})") from None
    if batch is None:
        return TensorStructInfo(None, out_dtype,
                                max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1))
    out = batch + ((sa[-2],) if a.ndim > 1 else ()) + ((sb[-1],) if b.ndim > 1 else ())
    return TensorStructInfo(out, out_dtype)


register("relax.matmul", _infer_matmul, ("x1", "x2"), {"out_dtype": "void"},
         pattern=OUT_ELEMWISE_FUSABLE)


def matmul(x1, x2, out_dtype=None) -> Call:
    """numpy.matmul: (..., m, k) @ (..., k, n), batch dims broadcast; a 1-D operand is a row
    (left) or column (right) vector whose unit dim is dropped."""
    return make_call("relax.matmul", (x1, x2), out_dtype=as_dtype_str(out_dtype))


def linear(data, weight, bias=None, out_dtype=None) -> Call:
    """`data @ weight.T + bias` (weight (out_features, in_features)), as nn.dense then add."""
    out = dense(data, weight, out_dtype)
    return out if bias is None else add(out, bias)
