"""unroll_loop: UNROLLED loops with a constant extent become that many copies of the body.

Before: For loops of kind UNROLLED. After: those with a constant extent are gone (a sequence of
copies with the loop variable replaced by 0, 1, ...; loops, lets and allocations inside each
copy get fresh variables so each is defined once); an UNROLLED loop of non-constant extent
becomes a SERIAL loop.
"""
from __future__ import annotations

from ...ir.module import IRModule
from .. import expr as E
from ..buffer import Buffer
from ..function import PrimFunc
from ..functor import IRMutator, substitute
from ..stmt import Allocate, For, ForKind, LetStmt, seq
from .common import map_funcs

MAX_UNROLL = 512


class _Freshen(IRMutator):
    """A copy of a statement with new variables for everything it defines."""

    def __init__(self):
        self.vmap = {}
        self.bmap = {}

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var

    def visit_buffer(self, b):
        return self.bmap.get(b, b)

    def visit_For(self, s):
        self.vmap[s.loop_var] = E.Var(s.loop_var.name, s.loop_var.dtype)
        return self.generic_visit(s)

    def visit_LetStmt(self, s):
        value = self.visit(s.value)
        self.vmap[s.var] = E.Var(s.var.name, s.var.dtype)
        return LetStmt(self.vmap[s.var], value, self.visit(s.body))

    def visit_Allocate(self, s):
        b = s.buffer
        data = E.Var(b.data.name, b.data.dtype)
        self.vmap[b.data] = data
        self.bmap[b] = Buffer(b.name, data, b.dtype, b.shape, b.strides, b.elem_offset,
                              b.scope, b.data_alignment, b.offset_factor)
        return Allocate(self.bmap[b], self.visit(s.body), s.condition)


class _Unroll(IRMutator):
    def visit_For(self, s):
        s = self.generic_visit(s)
        if s.kind != ForKind.UNROLLED:
            return s
        if not isinstance(s.extent, E.IntImm) or s.extent.value > MAX_UNROLL:
            return For(s.loop_var, s.min, s.extent, ForKind.SERIAL, s.body, s.thread_binding,
                       s.annotations)
        copies = []
        for k in range(s.extent.value):
            body = substitute(s.body, {s.loop_var: s.min + k})
            copies.append(_Freshen().visit(body) if k else body)
        return seq(*copies)


def _unroll_func(f: PrimFunc) -> PrimFunc:
    return _Unroll().visit_func(f)


def unroll_loop(mod: IRModule) -> IRModule:
    return map_funcs(mod, _unroll_func)
