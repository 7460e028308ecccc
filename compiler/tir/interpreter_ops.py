"""The interpreter's tables: numpy dtypes, binary operators and intrinsic calls (C semantics:
truncating `/` and `%` on integers, floor forms for FloorDiv/FloorMod, wrap-around)."""
from __future__ import annotations

import math

import numpy as np

from ..ir.dtype import DType
from ..ir.errors import IRError


def np_dtype(dtype: DType):
    if dtype.is_bool:
        return np.dtype(np.bool_)
    if dtype.is_float and not dtype.is_bfloat:
        return np.dtype(f"float{dtype.bits}")
    if dtype.is_int:
        return np.dtype(f"int{dtype.bits}")
    if dtype.is_uint:
        return np.dtype(f"uint{dtype.bits}")
    if dtype.is_handle:
        return np.dtype(object)
    raise IRError(f"interpreter: dtype {dtype} is not supported")


def _tdiv(a, b, dt):
    if dt.is_float:
        return a / b
    return (a - np.fmod(a, b)) // b


def _fdiv(a, b, dt):
    return np.floor(a / b) if dt.is_float else np.floor_divide(a, b)


BINARY = {
    "Add": lambda a, b, dt: a + b,
    "Sub": lambda a, b, dt: a - b,
    "Mul": lambda a, b, dt: a * b,
    "Div": _tdiv,
    "Mod": lambda a, b, dt: np.fmod(a, b),
    "FloorDiv": _fdiv,
    "FloorMod": lambda a, b, dt: np.mod(a, b),
    "Min": lambda a, b, dt: np.minimum(a, b),
    "Max": lambda a, b, dt: np.maximum(a, b),
    "EQ": lambda a, b, dt: np.equal(a, b),
    "NE": lambda a, b, dt: np.not_equal(a, b),
    "LT": lambda a, b, dt: np.less(a, b),
    "LE": lambda a, b, dt: np.less_equal(a, b),
    "GT": lambda a, b, dt: np.greater(a, b),
    "GE": lambda a, b, dt: np.greater_equal(a, b),
    "And": lambda a, b, dt: np.logical_and(a, b),
    "Or": lambda a, b, dt: np.logical_or(a, b),
}


def _round(dt, x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


_erf = np.vectorize(math.erf, otypes=[np.float64])

_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "erf": lambda x: _erf(x), "fabs": np.abs,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "nearbyint": np.rint,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "abs": np.abs, "bitwise_not": np.invert,
}
_BIN = {
    "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "copysign": np.copysign,
    "hypot": np.hypot, "ldexp": lambda a, b: np.ldexp(a, np.asarray(b).astype(np.int32)),
    "shift_left": np.left_shift, "shift_right": np.right_shift, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}

def _unary_call(fn):
    return lambda dt, x: fn(x)


def _binary_call(fn):
    return lambda dt, a, b: fn(a, b)


CALLS = {f"tir.{k}": _unary_call(f) for k, f in _UNARY.items()}
CALLS.update({f"tir.{k}": _binary_call(f) for k, f in _BIN.items()})
CALLS["tir.round"] = _round
CALLS["tir.likely"] = lambda dt, x: x
CALLS["tir.reinterpret"] = lambda dt, x: np.asarray(x).view(np_dtype(dt))[()]
