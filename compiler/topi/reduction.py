"""Reductions over axes with keepdims: sum, mean, max, min, prod, all, any (tag COMM_REDUCE),
argmax and argmin (tag COMM_REDUCE_IDX; the first index of the extreme value, int32).

    y = topi.sum(x, axis=(1, 2), keepdims=True)
"""
from __future__ import annotations

from .. import te
from ..ir.errors import IRError
from ..tir import expr as E
from . import tag
from .utils import get_const_int, normalize_axes


def _plan(data, axis, keepdims, what):
    axes = normalize_axes(axis, data.ndim, what)
    shape = []
    for k, s in enumerate(data.shape):
        if k not in axes:
            shape.append(s)
        elif keepdims:
            shape.append(E.const(1))
    return axes, tuple(shape)


def _input_index(out_index, ndim, axes, raxes, keepdims) -> list:
    """The input index read at output index `out_index`: reduce axes at the reduced dims (whose
    output dims, kept with keepdims, are skipped), output indices elsewhere."""
    idx, it, rt = [], iter(out_index), iter(raxes)
    for k in range(ndim):
        if k in axes:
            idx.append(next(rt))
            if keepdims:
                next(it)
        else:
            idx.append(next(it))
    return idx


def _reduce(name, reducer, data, axis, keepdims, cast=None):
    axes, shape = _plan(data, axis, keepdims, name)
    raxes = [te.reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    def f(*i):
        idx = _input_index(i, data.ndim, axes, raxes, keepdims)
        v = data(*idx)
        return reducer(v if cast is None else cast(v), axis=raxes)

    return te.compute(shape, f, name=f"T_{name}", tag=tag.COMM_REDUCE)


_prod = te.comm_reducer(lambda x, y: x * y, lambda t: E.make_const(t, 1), name="prod")
_all = te.comm_reducer(lambda x, y: E.logical_and(x, y), lambda t: E.const(True), name="all")
_any = te.comm_reducer(lambda x, y: E.logical_or(x, y), lambda t: E.const(False), name="any")


def sum(data, axis=None, keepdims=False):  # noqa: A001
    return _reduce("sum", te.sum, data, axis, keepdims)


def max(data, axis=None, keepdims=False):  # noqa: A001
    return _reduce("max", te.max, data, axis, keepdims)


def min(data, axis=None, keepdims=False):  # noqa: A001
    return _reduce("min", te.min, data, axis, keepdims)


def prod(data, axis=None, keepdims=False):
    return _reduce("prod", _prod, data, axis, keepdims)


def all(data, axis=None, keepdims=False):  # noqa: A001
    return _reduce("all", _all, data, axis, keepdims, cast=lambda v: v.astype("bool"))


def any(data, axis=None, keepdims=False):  # noqa: A001
    return _reduce("any", _any, data, axis, keepdims, cast=lambda v: v.astype("bool"))


def mean(data, axis=None, keepdims=False):
    """sum / count, the divide in its own elementwise stage after the reduction."""
    total = sum(data, axis, keepdims)
    count = 1
    for a in normalize_axes(axis, data.ndim, "mean"):
        count *= get_const_int(data.shape[a], "mean: reduced size")
    inv = E.make_const(data.dtype, 1.0 / count) if data.dtype.is_float else None
    return te.compute(total.shape,
                      lambda *i: total(*i) * inv if inv is not None else total(*i) // count,
                      name="T_mean", tag=tag.ELEMWISE)


def _arg_reducer(better, name):
    def combine(lhs, rhs):
        li, lv = lhs
        ri, rv = rhs
        keep = E.logical_or(better(lv, rv), E.logical_and(E.binary(E.EQ, lv, rv), li < ri))
        return te.select(keep, li, ri), te.select(keep, lv, rv)

    def identity(ti, tv):
        worst = te.min_value(tv) if name == "argmax" else te.max_value(tv)
        return E.make_const(ti, -1), worst

    return te.comm_reducer(combine, identity, name=name)


_argmax = _arg_reducer(lambda a, b: a > b, "argmax")
_argmin = _arg_reducer(lambda a, b: a < b, "argmin")


def _arg(name, reducer, data, axis, keepdims, select_last_index):
    if select_last_index:
        raise IRError(f"{name}: select_last_index=True is not supported")
    if axis is not None and not isinstance(axis, int):
        if len(axis) != 1:
            raise IRError(f"{name}: give one axis (or None for the flat index), got {axis}")
        axis = axis[0]
    axes, shape = _plan(data, axis, keepdims, name)
    raxes = [te.reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    def f(*i):
        idx = _input_index(i, data.ndim, axes, raxes, keepdims)
        flat = raxes[0].var
        for a, r in zip(axes[1:], raxes[1:]):
            flat = flat * data.shape[a] + r.var
        return reducer((flat.astype("int32"), data(*idx)), axis=raxes)

    outs = te.compute(shape, f, name=f"T_{name}", tag=tag.COMM_REDUCE_IDX)
    return outs[0]


def argmax(data, axis=None, keepdims=False, select_last_index=False):
    return _arg("argmax", _argmax, data, axis, keepdims, select_last_index)


def argmin(data, axis=None, keepdims=False, select_last_index=False):
    return _arg("argmin", _argmin, data, axis, keepdims, select_last_index)
