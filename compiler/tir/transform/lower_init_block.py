"""lower_init_block: the `init` of a block (what a reduction stores before its first update)
becomes part of its body, run on the first iteration of the block's reduction axes.

Before: blocks may have an init. After: no block has one; a block that had one starts with
`if v_k0 == min_k0 and v_k1 == min_k1 ...: <init>` over its REDUCE iteration variables (the
init unguarded when it has none), followed by its former body.
"""
from __future__ import annotations

from functools import reduce

from ...ir import IRModule
from .. import expr as E
from ..block import Block
from ..functor import IRMutator
from ..stmt import IfThenElse, seq
from .common import map_funcs


def lower_init_block(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerInit().visit_func(f))


class _LowerInit(IRMutator):
    def visit_Block(self, b: Block):
        b = self.generic_visit(b)
        if b.init is None:
            return b
        first = [E.binary(E.EQ, iv.var, iv.dom.min) for iv in b.iter_vars
                 if iv.kind == E.IterKind.REDUCE]
        init = IfThenElse(reduce(E.logical_and, first), b.init) if first else b.init
        return Block(b.iter_vars, b.reads, b.writes, b.name_hint, seq(init, b.body), None,
                     b.alloc_buffers, b.match_buffers, b.annotations)
