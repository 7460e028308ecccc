"""Reducers: `comm_reducer(fcombine, fidentity)` and the built-in `sum`, `max`, `min`.

`te.sum(A[i, k], axis=k, where=k < i)` is a Reduce node; a reducer over tuples (e.g. argmax)
returns one Reduce per element, to be the bodies of a multi-output compute.
"""
from __future__ import annotations

from typing import Callable

from ..ir.dtype import DType
from ..ir.errors import IRError
from ..tir import expr as E


def _axes(axis):
    if axis is None:
        raise IRError("a reduction needs axis= (one reduce_axis or a list of them)")
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    for a in axes:
        if not isinstance(a, E.IterVar) or a.kind != E.IterKind.REDUCE:
            raise IRError(f"reduction axis {a!r} is not a te.reduce_axis")
    return axes


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce"):
    """A commutative reducer, as TVM's: `fcombine(lhs, rhs)` combines two values, or for a
    reducer over tuples (`argmax((idx, val), axis=k)`) two tuples of Vars, returning a tuple;
    `fidentity(*dtypes)` gives the identity element (a tuple for tuples)."""

    def reducer(expr, axis=None, where=None, init=None):
        if axis is not None and not isinstance(axis, (E.IterVar, list, tuple)):
            return fcombine(E.convert(expr), E.convert(axis))  # elementwise: te.max(a, b)
        multi = isinstance(expr, (tuple, list))
        sources = tuple(E.convert(e) for e in (expr if multi else (expr,)))
        dtypes = [s.dtype for s in sources]
        lhs = tuple(E.Var(f"x{i}", d) for i, d in enumerate(dtypes))
        rhs = tuple(E.Var(f"y{i}", d) for i, d in enumerate(dtypes))
        result = fcombine(lhs, rhs) if multi else fcombine(lhs[0], rhs[0])
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        ident = fidentity(*dtypes) if multi else fidentity(dtypes[0])
        ident = tuple(ident) if isinstance(ident, (tuple, list)) else (ident,)
        result = tuple(E.cast(d, r) for d, r in zip(dtypes, result))
        ident = tuple(E.cast(d, E.convert(v)) for d, v in zip(dtypes, ident))
        combiner = E.CommReducer(lhs, rhs, result, ident)
        cond = E.const(True) if where is None else E.convert(where)
        inits = () if init is None else tuple(
            E.convert(v) for v in (init if isinstance(init, (tuple, list)) else (init,)))
        axes = _axes(axis)
        out = tuple(E.Reduce(combiner, sources, axes, cond, i, inits, dtypes[i])
                    for i in range(len(sources)))
        return out if multi else out[0]

    reducer.__name__ = name
    return reducer


def _min_value(dtype: DType):
    if dtype.is_float:
        return E.FloatImm(dtype, float("-inf"))
    if dtype.is_uint or dtype.is_bool:
        return E.make_const(dtype, 0)
    return E.make_const(dtype, -(1 << (dtype.bits - 1)))


def _max_value(dtype: DType):
    if dtype.is_float:
        return E.FloatImm(dtype, float("inf"))
    if dtype.is_bool:
        return E.make_const(dtype, 1)
    if dtype.is_uint:
        return E.make_const(dtype, (1 << dtype.bits) - 1)
    return E.make_const(dtype, (1 << (dtype.bits - 1)) - 1)


sum = comm_reducer(lambda x, y: x + y, lambda t: E.make_const(t, 0), name="sum")  # noqa: A001
max = comm_reducer(lambda x, y: E.Max(x, y), _min_value, name="max")  # noqa: A001
min = comm_reducer(lambda x, y: E.Min(x, y), _max_value, name="min")  # noqa: A001
