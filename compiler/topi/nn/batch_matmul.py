"""batch_matmul: [B, M, K] x [B, N, K] -> [B, M, N] (transpose_b=True, TVM's default)."""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ...tir import expr as E
from ..broadcast import is_one
from ..utils import get_const_tuple


def batch_matmul(tensor_a, tensor_b, oshape=None, out_dtype=None, transpose_a=False,
                 transpose_b=True):
    """Batched matmul of 3-d tensors; a batch size of 1 on either side broadcasts."""
    if tensor_a.ndim != 3 or tensor_b.ndim != 3:
        raise IRError("batch_matmul: both operands must be 3-d [batch, rows, cols]")
    out_dtype = as_dtype(out_dtype or tensor_a.dtype)
    ba, bb = tensor_a.shape[0], tensor_b.shape[0]
    M, K = (tensor_a.shape[2], tensor_a.shape[1]) if transpose_a else tensor_a.shape[1:]
    N, K2 = (tensor_b.shape[1], tensor_b.shape[2]) if transpose_b else \
        (tensor_b.shape[2], tensor_b.shape[1])
    ka, kb = get_const_tuple((K, K2))
    if isinstance(ka, int) and isinstance(kb, int) and ka != kb:
        raise IRError(f"batch_matmul: the reduction sizes differ ({ka} vs {kb})")
    if is_one(ba):
        batch = bb
    elif is_one(bb):
        batch = ba
    else:
        x, y = get_const_tuple((ba, bb))
        if isinstance(x, int) and isinstance(y, int) and x != y:
            raise IRError(f"batch_matmul: batch sizes {x} and {y} differ and neither is 1")
        batch = ba
    k = te.reduce_axis((0, K), name="k")

    def cast(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    def f(b, i, j):
        b_a = E.const(0) if is_one(ba) else b
        b_b = E.const(0) if is_one(bb) else b
        va = tensor_a[b_a, k, i] if transpose_a else tensor_a[b_a, i, k]
        vb = tensor_b[b_b, j, k] if transpose_b else tensor_b[b_b, k, j]
        return te.sum(cast(va) * cast(vb), axis=k)

    shape = tuple(oshape) if oshape is not None else (batch, M, N)
    return te.compute(shape, f, name="T_batch_matmul", tag="batch_matmul")
