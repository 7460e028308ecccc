"""skip_assert: the run-time checks are left out (PassContext config "tir.disable_assert").

Before: any loop IR. After: no AssertStmt; each was replaced by its body.
"""
from __future__ import annotations

from ...ir import IRModule
from ..functor import IRMutator, chain_of, rebuild_chain
from ..stmt import AssertStmt
from .common import map_funcs


def skip_assert(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _Skip().visit_func(f))


class _Skip(IRMutator):
    def visit_chain(self, s):
        """A chain walked in a loop (a packed function's argument checks nest deep), its
        asserts dropped."""
        heads, tail = chain_of(s)
        changes = [None if isinstance(h, AssertStmt) else self.mutate_head(h) for h in heads]
        return rebuild_chain(heads, changes, self.visit(tail))

    visit_LetStmt = visit_AssertStmt = visit_AttrStmt = visit_chain
