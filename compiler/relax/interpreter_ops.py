"""numpy kernels of the graph-level operators for the reference interpreter: elementwise,
linear algebra, reductions, search, shape manipulation, indexing, creation and dtype. The
neural-network and image operators are in interpreter_nn.py.

Each kernel is `kernel(attrs, *args) -> value`, where tensors are numpy arrays, shapes are
tuples of ints, scalars (PrimValues) are Python numbers. Results keep the dtype the operator's
struct-info inference gives (numpy's promotions are undone).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict

import numpy as np

Kernel = Callable[..., Any]
KERNELS: Dict[str, Kernel] = {}


def kernel(*names: str):
    def wrap(fn: Kernel) -> Kernel:
        for n in names:
            KERNELS["relax." + n] = fn
        return fn
    return wrap


def _like(result, x: np.ndarray) -> np.ndarray:
    return np.asarray(result).astype(x.dtype, copy=False)


# ---- elementwise binary ---------------------------------------------------------------------
def _int_divide(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _divide(a, b):
    if a.dtype.kind in "iu":
        return _int_divide(a, b)
    return np.true_divide(a, b)


_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": _divide,
    "floor_divide": np.floor_divide, "power": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "mod": np.fmod, "floor_mod": np.mod,
}
_COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}


def _binary(fn):
    def run(attrs, a, b):
        a, b = np.asarray(a), np.asarray(b)
        with np.errstate(all="ignore"):
            return _like(fn(a, b), a)
    return run


def _compare(fn):
    def run(attrs, a, b):
        return np.asarray(fn(np.asarray(a), np.asarray(b)), dtype=bool)
    return run


for _n, _f in _BINARY.items():
    KERNELS["relax." + _n] = _binary(_f)
for _n, _f in _COMPARE.items():
    KERNELS["relax." + _n] = _compare(_f)


# ---- elementwise unary ----------------------------------------------------------------------
_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    return _like(_erf(x.astype(np.float64)).astype(np.float64), x)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sigmoid": _sigmoid, "tanh": np.tanh, "erf": erf, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "abs": np.abs, "negative": np.negative, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "sign": np.sign, "square": np.square,
}


def _unary(fn):
    def run(attrs, x):
        x = np.asarray(x)
        with np.errstate(all="ignore"):
            return _like(fn(x), x)
    return run


for _n, _f in _UNARY.items():
    KERNELS["relax." + _n] = _unary(_f)


@kernel("logical_not")
def _logical_not(attrs, x):
    return np.logical_not(x)


@kernel("isnan")
def _isnan(attrs, x):
    return np.isnan(x)


@kernel("clip")
def _clip(attrs, x, lo, hi):
    return _like(np.clip(x, lo, hi), x)


# ---- linear algebra -------------------------------------------------------------------------
def _out_dtype(attrs, x):
    d = attrs.get("out_dtype", "void")
    return x.dtype if d in ("void", None) else np.dtype(d)


@kernel("matmul")
def _matmul(attrs, a, b):
    dtype = _out_dtype(attrs, a)
    return np.matmul(a.astype(dtype), b.astype(dtype)).astype(dtype)


# ---- reductions and search ------------------------------------------------------------------
def _axes(axis):
    return None if axis is None else tuple(axis)


def _reduce(fn, keep_dtype=True):
    def run(attrs, x):
        out = fn(x, axis=_axes(attrs.axis), keepdims=attrs.keepdims)
        return np.asarray(out).astype(x.dtype) if keep_dtype else np.asarray(out)
    return run


KERNELS["relax.sum"] = _reduce(np.sum)
KERNELS["relax.mean"] = _reduce(np.mean)
KERNELS["relax.max"] = _reduce(np.max)
KERNELS["relax.min"] = _reduce(np.min)
KERNELS["relax.prod"] = _reduce(np.prod)
KERNELS["relax.variance"] = _reduce(np.var)
KERNELS["relax.std"] = _reduce(np.std)


def _arg(fn):
    def run(attrs, x):
        if attrs.axis is None:
            out = fn(x.reshape(-1))
            shape = (1,) * x.ndim if attrs.keepdims else ()
            return np.asarray(out, dtype=np.int64).reshape(shape)
        return np.asarray(fn(x, axis=attrs.axis, keepdims=attrs.keepdims), dtype=np.int64)
    return run


KERNELS["relax.argmax"] = _arg(np.argmax)
KERNELS["relax.argmin"] = _arg(np.argmin)


@kernel("where")
def _where(attrs, cond, a, b):
    return np.where(cond, a, b).astype(a.dtype)


# ---- manipulation ---------------------------------------------------------------------------
@kernel("reshape")
def _reshape(attrs, x, shape):
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


@kernel("flatten")
def _flatten(attrs, x):
    return x.reshape(-1)


@kernel("permute_dims")
def _permute_dims(attrs, x):
    return np.ascontiguousarray(np.transpose(x, attrs.axes))


@kernel("concat")
def _concat(attrs, tensors):
    return np.concatenate(tensors, axis=attrs.axis)


@kernel("split")
def _split(attrs, x):
    ios = attrs.indices_or_sections
    return tuple(np.split(x, ios if isinstance(ios, int) else list(ios), axis=attrs.axis))


@kernel("squeeze")
def _squeeze(attrs, x):
    if attrs.axis is None:
        return np.squeeze(x)
    return np.squeeze(x, axis=tuple(a % x.ndim for a in attrs.axis))


@kernel("expand_dims")
def _expand_dims(attrs, x):
    ndim = x.ndim + len(attrs.axis)
    return np.expand_dims(x, tuple(a % ndim for a in attrs.axis))


@kernel("broadcast_to")
def _broadcast_to(attrs, x, shape):
    return np.ascontiguousarray(np.broadcast_to(x, tuple(shape)))


# ---- indexing -------------------------------------------------------------------------------
@kernel("take")
def _take(attrs, x, indices):
    mode = {"clip": "clip", "wrap": "wrap"}.get(attrs.mode, "raise")
    if attrs.axis is None:
        return np.take(x.reshape(-1), indices, mode=mode)
    return np.take(x, indices, axis=attrs.axis, mode=mode)


@kernel("strided_slice")
def _strided_slice(attrs, x):
    index = [slice(None)] * x.ndim
    strides = attrs.strides or (1,) * len(attrs.axes)
    for a, b, e, s in zip(attrs.axes, attrs.begin, attrs.end, strides):
        index[a % x.ndim] = slice(b, e, s)
    return np.ascontiguousarray(x[tuple(index)])


# ---- creation and dtype ---------------------------------------------------------------------
@kernel("zeros")
def _zeros(attrs, shape):
    return np.zeros(tuple(shape), attrs.dtype)


@kernel("ones")
def _ones(attrs, shape):
    return np.ones(tuple(shape), attrs.dtype)


@kernel("full")
def _full(attrs, shape, fill):
    return np.full(tuple(shape), fill, attrs.dtype)


def _like_dtype(attrs, x):
    return x.dtype if attrs.dtype == "void" else np.dtype(attrs.dtype)


@kernel("zeros_like")
def _zeros_like(attrs, x):
    return np.zeros(x.shape, _like_dtype(attrs, x))


@kernel("ones_like")
def _ones_like(attrs, x):
    return np.ones(x.shape, _like_dtype(attrs, x))


@kernel("full_like")
def _full_like(attrs, x, fill):
    return np.full(x.shape, fill, _like_dtype(attrs, x))


@kernel("arange")
def _arange(attrs):
    return np.arange(attrs.start, attrs.end, attrs.step).astype(attrs.dtype)


@kernel("astype")
def _astype(attrs, x):
    return np.asarray(x).astype(attrs.dtype)
