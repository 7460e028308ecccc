"""Activations: relu, leaky_relu, prelu (per-channel slope), gelu (the erf form)."""
from __future__ import annotations

from ... import te
from ...ir.errors import IRError
from ...tir import expr as E
from .. import tag
from ..utils import get_const_int, normalize_axis


def relu(x):
    """max(x, 0)"""
    return te.compute(x.shape, lambda *i: E.Max(x(*i), E.make_const(x.dtype, 0)),
                      name="T_relu", tag=tag.ELEMWISE)


def leaky_relu(x, alpha):
    """x if x > 0 else alpha * x"""
    def f(*i):
        v = x(*i)
        return te.select(v > E.make_const(v.dtype, 0), v, v * E.make_const(v.dtype, alpha))

    return te.compute(x.shape, f, name="T_leaky_relu", tag=tag.ELEMWISE)


def prelu(x, slope, axis: int = 1):
    """x if x > 0 else slope[c] * x, with c the index along `axis` (slope is 1-d, of that
    dimension's size)."""
    axis = normalize_axis(axis, x.ndim, "prelu")
    if slope.ndim != 1:
        raise IRError(f"prelu: the slope must be 1-d, got {slope.ndim} dimensions")
    if get_const_int(slope.shape[0], "prelu slope size") != \
            get_const_int(x.shape[axis], "prelu channel size"):
        raise IRError(f"prelu: the slope has {slope.shape[0]} values but axis {axis} of the "
                      f"input has {x.shape[axis]}")

    def f(*i):
        v = x(*i)
        return te.select(v > E.make_const(v.dtype, 0), v, v * slope(i[axis]))

    return te.compute(x.shape, f, name="T_prelu", tag=tag.BROADCAST)


def gelu(x):
    """x * 0.5 * (1 + erf(x / sqrt(2)))"""
    def f(*i):
        v = x(*i)
        c = E.make_const
        return v * c(v.dtype, 0.5) * (c(v.dtype, 1.0) + te.erf(v * c(v.dtype, 0.7071067811865476)))

    return te.compute(x.shape, f, name="T_gelu", tag=tag.ELEMWISE)
