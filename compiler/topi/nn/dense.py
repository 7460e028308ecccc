"""dense (y = x W^T + b, weight [out, in]) and matmul (y = op(A) op(B) + b); a dense whose
weight is packed in column panels (`dense_pack_weight` then `dense_packed`)."""
from __future__ import annotations

import numpy as np

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


def dense_pack_weight(weight, block: int, layout: str = "NK", name="T_dense_pack_weight"):
    """A weight in column panels of `block`: [ceil(N / block), K, block] (TVM's "NK{block}n"),
    out[p, k, j] = W[p * block + j, k] for `layout` "NK" (dense's [N, K]) or W[k, p * block + j]
    for "KN" (matmul's B [K, N]); the columns past N are zeros (tag "injective")."""
    if weight.ndim != 2 or layout not in ("NK", "KN"):
        raise IRError(f"dense_pack_weight: needs a 2-d weight in layout NK or KN, got "
                      f"{weight.ndim} dims, {layout!r}")
    n, k = get_const_tuple(weight.shape if layout == "NK" else weight.shape[::-1])
    zero = te.const(0, weight.dtype)

    def f(p, kk, j):
        col = p * block + j
        v = weight[te.min(col, n - 1), kk] if layout == "NK" else weight[kk, te.min(col, n - 1)]
        return v if n % block == 0 else te.if_then_else(col < n, v, zero)

    return te.compute((-(-n // block), k, block), f, name=name, tag=tag.INJECTIVE)


def dense_pack_weight_numpy(weight, block: int, layout: str = "NK"):
    """`dense_pack_weight` of a numpy weight."""
    w = np.asarray(weight)
    w = w if layout == "NK" else w.T
    n, k = w.shape
    panels = -(-n // block)
    out = np.zeros((panels * block, k), dtype=w.dtype)
    out[:n] = w
    return np.ascontiguousarray(out.reshape(panels, block, k).transpose(0, 2, 1))


def dense_packed(data, packed, units: int, out_dtype=None):
    """data [..., K] by a weight that `dense_pack_weight` packed, [ceil(units / b), K, b]:
    [..., units] (tag "dense_packed")."""
    if packed.ndim != 3 or data.ndim < 1:
        raise IRError("dense_packed: needs data [..., K] and a packed weight [N / b, K, b]")
    out_dtype = as_dtype(out_dtype or data.dtype)
    _, K2, block = get_const_tuple(packed.shape)
    _check_k("dense_packed", data.shape[-1], K2)
    k = te.reduce_axis((0, K2), name="k")
    return te.compute(tuple(data.shape[:-1]) + (units,),
                      lambda *i: te.sum(_acc(data[i[:-1] + (k,)], out_dtype)
                                        * _acc(packed[i[-1] // block, k, i[-1] % block],
                                               out_dtype), axis=k),
                      name="T_dense_packed", tag="dense_packed")
