"""convert_blocks_to_opaque: a block's iteration variables are replaced by the values its
realization binds them to.

Before: blocks without init (lower_init_block ran). After: every Block has no iteration
variables and every BlockRealize no iteration values; the block's body, regions and nested
blocks' bindings use the loop variables instead.
"""
from __future__ import annotations

from typing import Dict

from ...ir import IRModule
from .. import expr as E
from ..block import Block, BlockRealize
from ..functor import IRMutator
from .common import map_funcs


def convert_blocks_to_opaque(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _ToOpaque().visit_func(f))


class _ToOpaque(IRMutator):
    def __init__(self):
        self.vmap: Dict[E.Var, E.PrimExpr] = {}

    def visit_Var(self, v: E.Var):
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var

    def visit_BlockRealize(self, s: BlockRealize):
        values = tuple(self.visit(v) for v in s.iter_values)
        predicate = self.visit(s.predicate)
        b = s.block
        for iv, value in zip(b.iter_vars, values):
            self.vmap[iv.var] = value
        try:
            inner = self.generic_visit(b)
        finally:
            for iv in b.iter_vars:
                self.vmap.pop(iv.var, None)
        if not b.iter_vars and inner is b and predicate is s.predicate:
            return s
        block = Block((), inner.reads, inner.writes, inner.name_hint, inner.body, inner.init,
                      inner.alloc_buffers, inner.match_buffers, inner.annotations)
        return BlockRealize((), predicate, block)
