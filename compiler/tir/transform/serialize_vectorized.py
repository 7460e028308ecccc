"""serialize_vectorized: `vectorize` with vectorization off (TVM's VectorizeLoop(enable=False)),
what the pipeline runs under PassContext(config={"tir.disable_vectorize": True}).

Before: For loops of kind VECTORIZED. After: none; each is a SERIAL loop.
"""
from __future__ import annotations

from ...ir.module import IRModule
from ..functor import IRMutator
from ..stmt import For, ForKind, Stmt
from .common import map_funcs


class _Serialize(IRMutator):
    def visit_For(self, s: For) -> Stmt:
        s = self.generic_visit(s)
        if s.kind != ForKind.VECTORIZED:
            return s
        return For(s.loop_var, s.min, s.extent, ForKind.SERIAL, s.body, s.thread_binding,
                   s.annotations)


def serialize_vectorized(mod: IRModule) -> IRModule:
    return map_funcs(mod, _Serialize().visit_func)
