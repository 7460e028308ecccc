"""Helpers shared by the passes: apply a statement rewrite to every PrimFunc of a module; copy
a statement with fresh variables for what it defines; the terms of a chain of ands."""
from __future__ import annotations

from typing import Callable, List

from ...ir.module import IRModule
from .. import expr as E
from ..buffer import Buffer
from ..function import PrimFunc
from ..functor import IRMutator, chain_of, rebuild_chain
from ..stmt import Allocate, LetStmt, Stmt


def conjuncts(cond) -> List[E.PrimExpr]:
    """The terms of a condition's chain of logical ands (`[cond]` when it is not one)."""
    if isinstance(cond, E.And):
        return conjuncts(cond.a) + conjuncts(cond.b)
    return [cond]


def map_funcs(mod: IRModule, fn: Callable[[PrimFunc], PrimFunc]) -> IRModule:
    """Apply `fn` to every function; the same module comes back when nothing changed."""
    changed = False
    out = {}
    for name, f in mod.items():
        g = fn(f) if isinstance(f, PrimFunc) else f
        changed |= g is not f
        out[name] = g
    return mod.with_functions(out) if changed else mod


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

    def visit_chain(self, s):
        heads, tail = chain_of(s)
        changes = []
        for h in heads:
            change = self.mutate_head(h)
            if isinstance(h, LetStmt):
                change["var"] = self.vmap[h.var] = E.Var(h.var.name, h.var.dtype)
            changes.append(change)
        return rebuild_chain(heads, changes, self.visit(tail))

    visit_LetStmt = visit_AssertStmt = visit_AttrStmt = visit_chain

    def visit_Allocate(self, s):
        b = s.buffer
        data = E.Var(b.data.name, b.data.dtype)
        self.vmap[b.data] = data
        self.bmap[b] = Buffer(b.name, data, b.dtype, b.shape, b.strides, b.elem_offset,
                              b.scope, b.data_alignment, b.offset_factor)
        return Allocate(self.bmap[b], self.visit(s.body), s.condition)


def freshen(stmt: Stmt) -> Stmt:
    """A copy of `stmt` whose loops, lets and allocations define new variables, so the copy
    and the original can both stand in one function (each variable defined once)."""
    return _Freshen().visit(stmt)
