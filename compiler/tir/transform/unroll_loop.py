"""unroll_loop: UNROLLED loops with a constant extent become that many copies of the body.

Before: For loops of kind UNROLLED. After: those with a constant extent are gone (a sequence of
copies with the loop variable replaced by 0, 1, ...; loops, lets and allocations inside each
copy get fresh variables so each is defined once); an UNROLLED loop of non-constant extent
becomes a SERIAL loop. What the value makes constant in a copy is folded as it is made (a
select on the unrolled index keeps one branch), so the copies are no larger than they must be.
"""
from __future__ import annotations

from ...ir.module import IRModule
from .. import expr as E
from ..const_fold import fold
from ..function import PrimFunc
from ..functor import IRMutator
from ..stmt import For, ForKind, seq
from .common import freshen, map_funcs

MAX_UNROLL = 512


class _FoldingSubstitute(IRMutator):
    """Replaces `var` by the constant `value` and folds each rebuilt expression whose operands
    became constants."""

    def __init__(self, var: E.Var, value: E.PrimExpr):
        self.var, self.value = var, value

    def visit_Var(self, v: E.Var) -> E.PrimExpr:
        return self.value if v is self.var else v

    def visit(self, node):
        out = super().visit(node)
        if out is not node and isinstance(out, E.PrimExpr):
            folded = fold(out)
            if folded is not None:
                return folded
        return out


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
            value = s.min + k
            folded = fold(value)             # a constant start gives a constant
            body = _FoldingSubstitute(s.loop_var, value if folded is None else folded).visit(
                s.body)
            copies.append(freshen(body) if k else body)
        return seq(*copies)


def _unroll_func(f: PrimFunc) -> PrimFunc:
    return _Unroll().visit_func(f)


def unroll_loop(mod: IRModule) -> IRModule:
    return map_funcs(mod, _unroll_func)
