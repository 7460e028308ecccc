"""remove_no_op: drop statements that do nothing.

Before: any loop IR. After: no `Evaluate` of a constant (except a function body that is
nothing else), no loop of extent 0 or with an empty body, no branch on a constant condition,
no empty sequence element, no Allocate/LetStmt/AttrStmt around nothing.
"""
from __future__ import annotations

from ...ir.module import IRModule
from .. import expr as E
from ..function import PrimFunc
from ..functor import IRMutator
from ..stmt import Evaluate, SeqStmt, no_op, seq
from .common import map_funcs


def is_no_op(s) -> bool:
    return s is None or (isinstance(s, Evaluate) and isinstance(s.value, (E.IntImm, E.FloatImm))) \
        or (isinstance(s, SeqStmt) and not s.seq)


class _Remove(IRMutator):
    def visit_SeqStmt(self, s):
        items = [self.visit(x) for x in s.seq]
        kept = [x for x in items if not is_no_op(x)]
        if len(kept) == len(s.seq) and all(a is b for a, b in zip(kept, s.seq)):
            return s
        return seq(*kept) if kept else no_op()

    def visit_For(self, s):
        s = self.generic_visit(s)
        if is_no_op(s.body) or E.is_const_int(s.extent, 0):
            return no_op()
        return s

    def visit_IfThenElse(self, s):
        s = self.generic_visit(s)
        if isinstance(s.condition, E.IntImm):
            taken = s.then_case if s.condition.value else s.else_case
            return no_op() if taken is None else taken
        if is_no_op(s.then_case) and is_no_op(s.else_case):
            return no_op()
        return s

    def _wrapper(self, s):
        s = self.generic_visit(s)
        return no_op() if is_no_op(s.body) else s

    visit_Allocate = visit_LetStmt = visit_AttrStmt = _wrapper


def _remove_func(f: PrimFunc) -> PrimFunc:
    return _Remove().visit_func(f)


def remove_no_op(mod: IRModule) -> IRModule:
    return map_funcs(mod, _remove_func)

