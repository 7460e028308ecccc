"""Elementwise operators: arithmetic with numpy broadcasting (Add ... Pow, the variadic
Max/Min/Sum/Mean), comparisons and logic, Where, activations (Relu, LeakyRelu, PRelu, Sigmoid,
HardSigmoid, HardSwish, Tanh, Gelu, Erf, Elu, Softplus, Softsign), unary math, Clip, Cast,
Identity and Dropout (inference: the identity), Mod (fmod 0 and 1), IsNaN and IsInf (exact
comparisons with infinity). Activations and Mod without a graph-level operator are written with
the ones there are."""
from __future__ import annotations

import math

import numpy as np

from ...relax import expr as X
from ...relax import op as R
from .common import _DTYPES, agree, converter

_BINARY = {"Add": R.add, "Sub": R.subtract, "Mul": R.multiply, "Div": R.divide,
           "Equal": R.equal, "Less": R.less, "Greater": R.greater,
           "LessOrEqual": R.less_equal, "GreaterOrEqual": R.greater_equal,
           "And": R.logical_and, "Or": R.logical_or, "Xor": R.not_equal}

_UNARY = {"Relu": R.nn.relu, "Sigmoid": R.sigmoid, "Tanh": R.tanh, "Erf": R.erf,
          "Neg": R.negative, "Abs": R.abs, "Exp": R.exp, "Log": R.log, "Sqrt": R.sqrt,
          "Floor": R.floor, "Ceil": R.ceil, "Sign": R.sign, "Sin": R.sin, "Cos": R.cos}


def scalar(value, dtype: str) -> X.Constant:
    """A 0-d constant of `dtype`."""
    return X.const(np.asarray(value, dtype=dtype), dtype)


def _operands(ctx, n):
    """Inputs 0..n-1, shape values with symbolic elements as int64 tensors (of the type of an
    integer operand beside them)."""
    xs = [ctx.operand(i) for i in range(n)]
    dtypes = [ctx.dtype(i) for i in range(n) if not ctx.is_symbolic(i)]
    to = next((d for d in dtypes if d.startswith(("int", "uint"))), None)
    return [R.astype(x, to) if ctx.is_symbolic(i) and to not in (None, "int64") else x
            for i, x in enumerate(xs)]


@converter(*_BINARY)
def _binary(ctx):
    return _BINARY[ctx.op_type](*agree(ctx, *_operands(ctx, 2)))


@converter(*_UNARY)
def _unary(ctx):
    return _UNARY[ctx.op_type](ctx.input(0))


@converter("Mod")
def _mod(ctx):
    a, b, dt = ctx.input(0), ctx.input(1), ctx.dtype(0)
    if not int(ctx.attr("fmod", 0)):
        return R.floor_mod(a, b)        # the sign of the divisor, as Python's %
    # fmod: the sign of the dividend, a - b * trunc(a / b)
    if dt.startswith("float"):
        q = R.divide(a, b)
        q = R.multiply(R.sign(q), R.floor(R.abs(q)))
    else:
        q = R.divide(a, b)              # integer division truncates
    return R.subtract(a, R.multiply(q, b))


@converter("IsNaN")
def _isnan(ctx):
    return R.isnan(ctx.input(0))


@converter("IsInf")
def _isinf(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    pos, neg = int(ctx.attr("detect_positive", 1)), int(ctx.attr("detect_negative", 1))
    if not dt.startswith("float"):      # integers are never infinite
        return R.logical_and(R.equal(x, x), scalar(False, "bool"))
    # comparisons only: they carry no fast-math flags, so they stay exact under -fast-math
    is_pos, is_neg = R.equal(x, scalar(np.inf, dt)), R.equal(x, scalar(-np.inf, dt))
    if pos and neg:
        return R.logical_or(is_pos, is_neg)
    if pos or neg:
        return is_pos if pos else is_neg
    return R.logical_and(is_pos, is_neg)     # detects nothing: false everywhere


@converter("Not")
def _not(ctx):
    return R.equal(ctx.input(0), scalar(False, "bool"))


@converter("Tan")
def _tan(ctx):
    x = ctx.input(0)
    return R.divide(R.sin(x), R.cos(x))


@converter("Reciprocal")
def _reciprocal(ctx):
    return R.divide(scalar(1, ctx.dtype(0)), ctx.input(0))


@converter("Pow")
def _pow(ctx):
    x, y = ctx.input(0), ctx.input(1)
    dx, dy = ctx.dtype(0), ctx.dtype(1)
    if dx.startswith("float"):
        return R.power(x, y if dx == dy else R.astype(y, dx))
    # integer powers are computed in float64 (exact for the results int64 holds exactly)
    return R.astype(R.power(R.astype(x, "float64"), R.astype(y, "float64")), dx)


@converter("Max", "Min", "Sum", "Mean")
def _variadic(ctx):
    fn = {"Max": R.maximum, "Min": R.minimum, "Sum": R.add, "Mean": R.add}[ctx.op_type]
    xs = [x for x in ctx.inputs() if x is not None]
    if not xs:
        raise ctx.error("needs at least one input")
    xs = agree(ctx, *xs)
    out = xs[0]
    for x in xs[1:]:
        out = fn(out, x)
    if ctx.op_type == "Mean" and len(xs) > 1:
        out = R.divide(out, scalar(len(xs), ctx.dtype(0)))
    return out


@converter("Where")
def _where(ctx):
    return R.where(*agree(ctx, *_operands(ctx, 3)))


@converter("LeakyRelu")
def _leaky_relu(ctx):
    return R.nn.leakyrelu(ctx.input(0), ctx.attr("alpha", 0.01))


@converter("PRelu")
def _prelu(ctx):
    x, slope = ctx.input(0), ctx.input(1)
    zero = scalar(0, ctx.dtype(0))
    return R.where(R.less(x, zero), R.multiply(x, slope), x)


@converter("Elu")
def _elu(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    neg = R.multiply(scalar(ctx.attr("alpha", 1.0), dt), R.subtract(R.exp(x), scalar(1, dt)))
    return R.where(R.less(x, scalar(0, dt)), neg, x)


@converter("Softplus")
def _softplus(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    return R.log(R.add(R.exp(x), scalar(1, dt)))


@converter("Softsign")
def _softsign(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    return R.divide(x, R.add(R.abs(x), scalar(1, dt)))


def _hard_sigmoid(x, dt, alpha, beta):
    return R.clip(R.add(R.multiply(x, scalar(alpha, dt)), scalar(beta, dt)), 0.0, 1.0)


@converter("HardSigmoid")
def _hardsigmoid(ctx):
    return _hard_sigmoid(ctx.input(0), ctx.dtype(0), ctx.attr("alpha", 0.2),
                         ctx.attr("beta", 0.5))


@converter("HardSwish")
def _hardswish(ctx):
    x = ctx.input(0)
    return R.multiply(x, _hard_sigmoid(x, ctx.dtype(0), 1.0 / 6.0, 0.5))


@converter("Gelu")
def _gelu(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    approx = ctx.attr("approximate", "none")
    if approx == "none":
        return R.nn.gelu(x)
    if approx != "tanh":
        raise ctx.unsupported(f"approximate={approx!r}")
    # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    inner = R.multiply(scalar(math.sqrt(2.0 / math.pi), dt),
                       R.add(x, R.multiply(scalar(0.044715, dt),
                                           R.multiply(x, R.multiply(x, x)))))
    return R.multiply(R.multiply(scalar(0.5, dt), x), R.add(scalar(1, dt), R.tanh(inner)))


@converter("Clip")
def _clip(ctx):
    x, dt = ctx.input(0), ctx.dtype(0)
    if ctx.opset < 11:
        lo, hi = ctx.attr("min"), ctx.attr("max")
        lo_e = None if lo is None else scalar(lo, dt)
        hi_e = None if hi is None else scalar(hi, dt)
    else:
        lo = ctx.const(1).item() if ctx.is_known(1) else None
        hi = ctx.const(2).item() if ctx.is_known(2) else None
        lo_e, hi_e = ctx.input(1), ctx.input(2)
    if lo is not None and hi is not None:
        return R.clip(x, lo, hi)
    if lo_e is not None:
        x = R.maximum(x, lo_e)
    if hi_e is not None:
        x = R.minimum(x, hi_e)
    return x


@converter("Cast")
def _cast(ctx):
    to = ctx.attr("to")
    dtype = _DTYPES.get(int(to)) if to is not None else None
    if dtype is None:
        raise ctx.unsupported(f"a cast to element type {to}")
    return R.astype(ctx.input(0), dtype)


@converter("CastLike")
def _cast_like(ctx):
    return R.astype(ctx.input(0), ctx.dtype(1))


@converter("Identity")
def _identity(ctx):
    return ctx.input(0)


@converter("Dropout", const_inputs=(1, 2))
def _dropout(ctx):
    if ctx.is_known(2) and bool(np.asarray(ctx.const(2)).item()):
        raise ctx.unsupported("training_mode=True")
    if ctx.has(2) and not ctx.is_known(2):
        raise ctx.unsupported("a training_mode computed at run time")
    x = ctx.input(0)
    mask = R.ones_like(x, "bool") if ctx.output_used(1) else None
    return [x, mask]
