"""lower_opaque_block: blocks become plain statements.

Before: blocks without iteration variables or init (convert_blocks_to_opaque ran). After: no
Block or BlockRealize: each is its body, inside an `Allocate` per buffer the block allocates
(the first one outermost), inside `if predicate:` when its predicate is not constant true.
A block that matches buffers to regions (T.match_buffer in a block) raises
UnsupportedOpError.
"""
from __future__ import annotations

from ...ir import IRModule
from ...ir.errors import InternalError, UnsupportedOpError
from ..block import BlockRealize, is_true
from ..functor import IRMutator
from ..stmt import Allocate, IfThenElse
from .common import map_funcs


def lower_opaque_block(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerBlock().visit_func(f))


class _LowerBlock(IRMutator):
    def visit_BlockRealize(self, s: BlockRealize):
        b = s.block
        if b.iter_vars or b.init is not None:
            raise InternalError(f"lower_opaque_block: block '{b.name_hint}' still has iteration "
                                "variables or an init")
        if b.match_buffers:
            raise UnsupportedOpError(f"block '{b.name_hint}' matches buffers to regions "
                                     "(T.match_buffer in a block); Kiln cannot lower that yet")
        body = self.visit(b.body)
        for buf in reversed(b.alloc_buffers):
            body = Allocate(buf, body)
        if not is_true(s.predicate):
            body = IfThenElse(s.predicate, body)
        return body
