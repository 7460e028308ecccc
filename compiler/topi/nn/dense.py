"""dense (y = x W^T + b, weight [out, in]) and matmul (y = op(A) op(B) + b)."""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from .. import tag
from ..utils import get_const_tuple


def _acc(v, dtype):
    return v if v.dtype == dtype else v.astype(dtype)


def _check_k(what, ka, kb):
    a, b = get_const_tuple((ka, kb))
    if isinstance(a, int) and isinstance(b, int) and a != b:
        raise IRError(f"{what}: the reduction sizes differ ({a} vs {b})")


def add_bias(out, bias, name="T_add_bias"):
    """out[..., j] + bias[j] (tag BROADCAST)."""
    if bias.ndim != 1:
        raise IRError(f"bias must be 1-d, got shape {[str(s) for s in bias.shape]}")
    return te.compute(out.shape, lambda *i: out(*i) + _acc(bias(i[-1]), out.dtype), name=name,
                      tag=tag.BROADCAST)


def dense(data, weight, bias=None, out_dtype=None):
    """data [M, K], weight [N, K] -> [M, N] (tag "dense"); `bias` [N] is added in its own
    broadcast stage."""
    if data.ndim != 2 or weight.ndim != 2:
        raise IRError("dense: data and weight must be 2-d ([batch, in] and [out, in])")
    out_dtype = as_dtype(out_dtype or data.dtype)
    M, K = data.shape
    N, K2 = weight.shape
    _check_k("dense", K, K2)
    k = te.reduce_axis((0, K), name="k")
    out = te.compute((M, N), lambda i, j: te.sum(_acc(data[i, k], out_dtype)
                                                 * _acc(weight[j, k], out_dtype), axis=k),
                     name="T_dense", tag="dense")
    return out if bias is None else add_bias(out, bias)


def matmul(tensor_a, tensor_b, bias=None, out_dtype=None, transpose_a=False, transpose_b=False):
    """op(A) @ op(B) for 2-d tensors, op transposing when asked (tag "matmul")."""
    if tensor_a.ndim != 2 or tensor_b.ndim != 2:
        raise IRError("matmul: both operands must be 2-d (use batch_matmul for more)")
    out_dtype = as_dtype(out_dtype or tensor_a.dtype)
    M, K = (tensor_a.shape[1], tensor_a.shape[0]) if transpose_a else tensor_a.shape
    K2, N = (tensor_b.shape[1], tensor_b.shape[0]) if transpose_b else tensor_b.shape
    _check_k("matmul", K, K2)
    k = te.reduce_axis((0, K), name="k")

    def a(i):
        return tensor_a[k, i] if transpose_a else tensor_a[i, k]

    def b(j):
        return tensor_b[j, k] if transpose_b else tensor_b[k, j]

    out = te.compute((M, N), lambda i, j: te.sum(_acc(a(i), out_dtype) * _acc(b(j), out_dtype),
                                                 axis=k), name="T_matmul", tag="matmul")
    return out if bias is None else add_bias(out, bias)
