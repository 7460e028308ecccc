"""instrument_bound_checkers: each buffer store checks, at run time, that it and the loads of
its value stay inside their buffers (PassContext config "tir.instrument_bound_checkers").

Before: flattened loop IR (one index per access; the index counts elements of the buffer's
dtype from its elem_offset).
After: every BufferStore whose accesses can be checked is the body of one

    AssertStmt(0 <= i && i < extent, "RuntimeError",
               "index <i> is out of the bounds [0, <extent>) of buffer 'A'")

per access (in int64), outermost first: the store's index, then the indices of the loads in
its value. `extent` is the product of the buffer's shape (1 for rank 0), or with
strides `1 + sum((shape_k - 1) * stride_k)`. A Ramp index checks its first and last lane, a
Broadcast its value. Not checked, as in TVM: loads outside a stored value, loads in a branch of
`tir.if_then_else` (the branch may not run) or under a Let of the value, and gather indices.
A condition the simplifier proves true is left out.
"""
from __future__ import annotations

from functools import reduce
from typing import List, Optional, Tuple

from ...arith import simplify_expr
from ...ir import IRModule
from ...ir.dtype import int64
from .. import expr as E
from ..functor import IRMutator
from ..stmt import AssertStmt, BufferStore
from .common import map_funcs


def instrument_bound_checkers(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _Instrument().visit_func(f))


def buffer_extent(buffer) -> E.PrimExpr:
    """The number of elements (of the buffer's dtype) an index of `buffer` may reach."""
    shape = [E.cast(int64, d) for d in buffer.shape]
    if not buffer.strides:
        return reduce(lambda a, b: a * b, shape, E.const(1, int64))
    last = [(d - E.const(1, int64)) * E.cast(int64, s) for d, s in zip(shape, buffer.strides)]
    return reduce(lambda a, b: a + b, last, E.const(1, int64))


def _endpoints(index) -> Optional[Tuple[E.PrimExpr, ...]]:
    if index.dtype.lanes == 1:
        return (index,)
    if isinstance(index, E.Ramp):
        return (index.base, index.base + index.stride * (index.lanes - 1))
    if isinstance(index, E.Broadcast):
        return (index.value,)
    return None  # a gather


class _Loads(IRMutator):
    """Collects the checkable (buffer, index) accesses of a stored value."""

    def __init__(self):
        self.accesses: List[Tuple[object, E.PrimExpr]] = []

    def visit_BufferLoad(self, e):
        self.generic_visit(e)
        if len(e.indices) == 1:
            self.accesses.append((e.buffer, e.indices[0]))
        return e

    def visit_Call(self, e):
        if e.op == "tir.if_then_else":
            self.visit(e.args[0])
            return e
        return self.generic_visit(e)

    def visit_Let(self, e):
        self.visit(e.value)
        return e


class _Instrument(IRMutator):
    def visit_BufferStore(self, s: BufferStore):
        loads = _Loads()
        for i in s.indices:
            loads.visit(i)
        loads.visit(s.value)
        accesses = list(loads.accesses)
        if len(s.indices) == 1:
            accesses.insert(0, (s.buffer, s.indices[0]))
        checks = []
        for buffer, index in accesses:
            points = _endpoints(index)
            if points is None:
                continue
            extent = simplify_expr(buffer_extent(buffer))
            for p in points:
                p64 = simplify_expr(E.cast(int64, p))
                ok = simplify_expr(E.logical_and(p64 >= E.const(0, int64), p64 < extent))
                if not (isinstance(ok, E.IntImm) and ok.value):
                    checks.append((ok, buffer, p64, extent))
        body = s
        for ok, buffer, index, extent in reversed(checks):
            body = AssertStmt(ok, "RuntimeError", ("index ", index, " is out of the bounds [0, ",
                                                   extent, f") of buffer '{buffer.name}'"), body)
        return body
