"""Binary operators with numpy broadcasting (tag BROADCAST, or ELEMWISE when the shapes are
equal) and the comparisons (bool result). Either side may be a Python scalar or an expression.

    z = topi.add(x, y)            # x (2, 1, 4), y (3, 1) -> z (2, 3, 4)
"""
from __future__ import annotations

from .. import te
from ..ir.errors import IRError
from ..tir import expr as E
from . import tag
from .utils import simplify


def _same(a, b) -> bool:
    """Whether two dims are provably equal (symbolic ones too: `h // 2` and `h // 2`)."""
    a, b = simplify(a), simplify(b)
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    if a is b:
        return True
    if a.dtype != b.dtype:
        return False
    diff = simplify(a - b)
    return isinstance(diff, E.IntImm) and diff.value == 0


def is_one(e) -> bool:
    return isinstance(simplify(e), E.IntImm) and int(simplify(e).value) == 1


def broadcast_shape(a_shape, b_shape, what: str = "broadcast") -> tuple:
    """The numpy broadcast of two shapes; IRError when they do not broadcast."""
    na, nb = len(a_shape), len(b_shape)
    n = max(na, nb)
    out = []
    for k in range(n):
        da = a_shape[k - n + na] if k - n + na >= 0 else None
        db = b_shape[k - n + nb] if k - n + nb >= 0 else None
        if da is None or (db is not None and is_one(da)):
            out.append(db)
        elif db is None or is_one(db) or _same(da, db):
            out.append(da)
        else:
            raise IRError(f"{what}: shapes {[str(s) for s in a_shape]} and "
                          f"{[str(s) for s in b_shape]} do not broadcast (dimension {k}: "
                          f"{da} vs {db})")
    return tuple(out)


def broadcast_index(t: te.Tensor, out_index) -> tuple:
    """The index into `t` of output element `out_index` (t broadcast to the output's shape)."""
    off = len(out_index) - t.ndim
    return tuple(E.const(0, i.dtype) if is_one(d) else i
                 for d, i in zip(t.shape, out_index[off:]))


def broadcast_to(x, shape):
    """x broadcast to `shape` (numpy.broadcast_to)."""
    shape = tuple(E.convert(s) for s in shape)
    broadcast_shape(x.shape, shape, "broadcast_to")
    return te.compute(shape, lambda *i: x(*broadcast_index(x, i)), name="T_broadcast_to",
                      tag=tag.BROADCAST)


def _binary(name: str, fn):
    def op(lhs, rhs):
        lt, rt = isinstance(lhs, te.Tensor), isinstance(rhs, te.Tensor)
        if not lt and not rt:
            return fn(E.convert(lhs), E.convert(rhs))
        if not rt:
            return te.compute(lhs.shape, lambda *i: fn(lhs(*i), _scalar(rhs, lhs.dtype)),
                              name=f"T_{name}", tag=tag.ELEMWISE)
        if not lt:
            return te.compute(rhs.shape, lambda *i: fn(_scalar(lhs, rhs.dtype), rhs(*i)),
                              name=f"T_{name}", tag=tag.ELEMWISE)
        shape = broadcast_shape(lhs.shape, rhs.shape, name)
        same = len(lhs.shape) == len(rhs.shape) and all(
            _same(a, b) for a, b in zip(lhs.shape, rhs.shape))
        return te.compute(shape, lambda *i: fn(lhs(*broadcast_index(lhs, i)),
                                               rhs(*broadcast_index(rhs, i))),
                          name=f"T_{name}", tag=tag.ELEMWISE if same else tag.BROADCAST)

    op.__name__ = name
    return op


def _scalar(v, dtype):
    v = E.convert(v)
    if isinstance(v, (E.IntImm, E.FloatImm)) and v.dtype != dtype:
        return E.make_const(dtype, v.value)
    return v


def _divide(a, b):
    if a.dtype.is_float:
        return a / b
    return E.binary(E.Div, a, b)  # integer division truncates, as TVM's topi.divide


add = _binary("add", lambda a, b: a + b)
subtract = _binary("subtract", lambda a, b: a - b)
multiply = _binary("multiply", lambda a, b: a * b)
divide = _binary("divide", _divide)
floor_divide = _binary("floor_divide", lambda a, b: te.floor(a / b) if a.dtype.is_float
                       else te.floordiv(a, b))
floor_mod = _binary("floor_mod", lambda a, b: a - te.floor(a / b) * b if a.dtype.is_float
                    else te.floormod(a, b))
power = _binary("power", lambda a, b: te.power(a, b))
maximum = _binary("maximum", lambda a, b: E.binary(E.Max, a, b))
minimum = _binary("minimum", lambda a, b: E.binary(E.Min, a, b))
equal = _binary("equal", lambda a, b: E.binary(E.EQ, a, b))
not_equal = _binary("not_equal", lambda a, b: E.binary(E.NE, a, b))
less = _binary("less", lambda a, b: a < b)
less_equal = _binary("less_equal", lambda a, b: a <= b)
greater = _binary("greater", lambda a, b: a > b)
greater_equal = _binary("greater_equal", lambda a, b: a >= b)
logical_and = _binary("logical_and", lambda a, b: E.logical_and(a, b))
logical_or = _binary("logical_or", lambda a, b: E.logical_or(a, b))
