"""Reductions over axes (sum, mean, max, min, prod, argmax, argmin, variance, std)."""
from .... import topi


def _axis(call):
    axis = call.attrs.axis
    if axis is None:
        return None
    return list(axis) if isinstance(axis, (tuple, list)) else int(axis)


def _reduce(fn):
    return lambda call, a: fn(a[0], _axis(call), call.attrs.keepdims)


def _arg(fn):
    """argmax/argmin: topi's indices are int32; the graph level's are int64."""
    def make(call, a):
        out = fn(a[0], _axis(call), call.attrs.keepdims)
        want = call.struct_info.dtype
        return out if str(out.dtype) == want else topi.cast(out, want)
    return make


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
    "relax.prod": _reduce(topi.prod), "relax.argmax": _arg(topi.argmax),
    "relax.argmin": _arg(topi.argmin), "relax.variance": _variance, "relax.std": _std,
}
