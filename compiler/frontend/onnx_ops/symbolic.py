"""Shape values with symbolic elements: what `Shape` of a tensor with symbolic dims gives, and
whatever small integer tensors are computed from it (Gather, Unsqueeze, Concat, Slice,
arithmetic, Equal / Where, Cast, ...). Such a value is a numpy object array (0-d or 1-D, of a
length known while importing) whose elements are ints or symbolic dims (tir expressions of the
model's named dims); the operators that take a shape (Reshape, Expand, ConstantOfShape, Range,
Slice) read its elements as dims, so the shape subgraphs exporters write for a dynamic axis
fold into symbolic dims instead of run-time shape tensors.

`evaluate(op_type, attrs, inputs, shape_of)` computes one node on such values (inputs are
numpy arrays, ints or symbolic; `shape_of(i)` is input i's tensor shape, for Shape and Size of
a run-time tensor); it returns the outputs, or None when the node is not one it can compute
(the node is then converted as usual, and a run-time use of a symbolic value is refused)."""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence

import numpy as np

from ...relax import shape_util as su
from ...tir import expr as E

# elements of a shape value are at most this many (beyond it the value is not a shape)
MAX_ELEMENTS = 64


def is_symbolic(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype == object and \
        any(isinstance(v, E.PrimExpr) for v in a.reshape(-1))


def as_object(a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == object:
        return a
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = int(a[idx])
    return out


def concrete(a: np.ndarray, dtype: str) -> Optional[np.ndarray]:
    """`a` as a numpy array of `dtype` when no element is symbolic, else None."""
    if is_symbolic(a):
        return None
    return np.asarray(a.tolist(), dtype=dtype).reshape(a.shape)


def _dim(v):
    return su.norm(v) if isinstance(v, E.PrimExpr) else int(v)


def _elementwise(fn: Callable, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(as_object(a), as_object(b))
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        r = fn(a[idx], b[idx])
        if r is None:
            raise _NotShape()
        out[idx] = r
    return out


class _NotShape(Exception):
    """The node is not a computation on shape values that can be done while importing."""


def _div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q    # ONNX integer Div truncates
    return su.floordiv(a, b)  # dims are non-negative: floor is truncation


def _equal(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if su.equal(a, b):
        return True
    # a symbolic dim is at least 1: it differs from any int below 1
    if isinstance(b, int) and b < 1 or isinstance(a, int) and a < 1:
        return False
    if su.known_unequal(a, b):
        return False
    return None


_ARITH = {"Add": su.add, "Sub": su.sub, "Mul": su.mul, "Div": _div, "Equal": _equal}


def _shape(attrs, shape):
    ndim = len(shape)
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    end = ndim if end is None else int(end)
    return [_obj(list(shape)[slice(*slice(start, end).indices(ndim)[:2])])]


def _obj(values: Sequence) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = _dim(v)
    return out


def evaluate(op_type: str, attrs: dict, inputs: List[Optional[np.ndarray]],
             shape_of: Callable[[int], tuple]) -> Optional[list]:
    try:
        outs = _evaluate(op_type, attrs, inputs, shape_of)
    except _NotShape:
        return None
    if outs is None:
        return None
    for o in outs:
        if o.ndim > 1 or o.size > MAX_ELEMENTS:
            return None
    return outs


def _evaluate(op_type, attrs, inputs, shape_of):
    if op_type == "Shape":
        return _shape(attrs, shape_of(0))
    if op_type == "Size":
        return [_scalar(su.product(shape_of(0)))]
    if any(x is None for x in inputs):
        return None
    xs = [as_object(x) for x in inputs]
    if op_type in ("Identity", "Cast"):
        to = attrs.get("to")
        if op_type == "Cast" and to not in (6, 7) and is_symbolic(xs[0]):
            raise _NotShape()   # symbolic dims stay integers
        return [xs[0]]
    if op_type in _ARITH:
        return [_elementwise(_ARITH[op_type], xs[0], xs[1])]
    if op_type == "Where":
        cond = xs[0]
        if is_symbolic(cond):
            raise _NotShape()
        c, a, b = np.broadcast_arrays(cond, xs[1], xs[2])
        out = np.empty(c.shape, dtype=object)
        for idx in np.ndindex(c.shape):
            out[idx] = a[idx] if bool(c[idx]) else b[idx]
        return [out]
    if op_type == "Gather":
        data, idx = xs
        if int(attrs.get("axis", 0)) != 0 or data.ndim != 1 or is_symbolic(idx):
            raise _NotShape()
        i = np.asarray(idx.tolist(), dtype=np.int64).reshape(idx.shape)
        return [np.asarray(data[np.where(i < 0, i + len(data), i)], dtype=object)]
    if op_type == "Unsqueeze":
        axes = attrs.get("axes") if len(xs) < 2 else xs[1].tolist()
        if axes is None or xs[0].ndim + len(axes) > 1:
            raise _NotShape()
        return [xs[0].reshape(1)]
    if op_type == "Squeeze":
        return [xs[0].reshape(())] if xs[0].size == 1 else None
    if op_type == "Concat":
        return [np.concatenate([x.reshape(-1) for x in xs])]
    if op_type == "Reshape":
        target = xs[1].tolist()
        if is_symbolic(xs[1]) or len(target) != 1 or target[0] not in (-1, xs[0].size):
            raise _NotShape()
        return [xs[0].reshape(-1)]
    if op_type == "Slice" and xs[0].ndim == 1 and not any(is_symbolic(x) for x in xs[1:]):
        starts, ends = int(xs[1].reshape(-1)[0]), int(xs[2].reshape(-1)[0])
        step = int(xs[4].reshape(-1)[0]) if len(xs) > 4 else 1
        return [xs[0][starts:ends:step]]
    if op_type == "ConstantOfShape":
        shape = xs[0].tolist()
        if is_symbolic(xs[0]) or len(shape) > 1:
            raise _NotShape()
        value = attrs.get("value")
        value = np.zeros(1, "float32") if value is None else np.asarray(value).reshape(-1)
        if value.dtype.kind not in "iu":
            raise _NotShape()
        return [as_object(np.full(shape, value[0], dtype=np.int64))]
    return None


def _scalar(v) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = _dim(v)
    return out
