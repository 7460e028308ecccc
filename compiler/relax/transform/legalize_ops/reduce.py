"""Reductions over axes (sum, mean, max, min, prod, argmax, argmin, variance, std)."""
from .... import topi


def _axis(call):
    axis = call.attrs.axis
    if axis is None:
        return None
    return list(axis) if isinstance(axis, (tuple, list)) else int(axis)


def _reduce(fn):
    return lambda call, a: fn(a[0], _axis(call), call.attrs.keepdims)


def _variance(call, a):
    x, axis, keep = a[0], _axis(call), call.attrs.keepdims
    mean = topi.mean(x, axis, True)
    diff = topi.subtract(x, mean)
    return topi.mean(topi.multiply(diff, diff), axis, keep)


def _std(call, a):
    return topi.sqrt(_variance(call, a))


LEGALIZE = {
    "relax.sum": _reduce(topi.sum), "relax.mean": _reduce(topi.mean),
    "relax.max": _reduce(topi.max), "relax.min": _reduce(topi.min),
    "relax.prod": _reduce(topi.prod), "relax.argmax": _reduce(topi.argmax),
    "relax.argmin": _reduce(topi.argmin), "relax.variance": _variance, "relax.std": _std,
}
