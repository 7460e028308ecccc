"""unroll_loop: UNROLLED loops with a constant extent become that many copies of the body.

Before: For loops of kind UNROLLED. After: those with a constant extent are gone (a sequence of
copies with the loop variable replaced by 0, 1, ...; loops, lets and allocations inside each
copy get fresh variables so each is defined once); an UNROLLED loop of non-constant extent
becomes a SERIAL loop.
"""
from __future__ import annotations

from ...ir.module import IRModule
from .. import expr as E
from ..function import PrimFunc
from ..functor import IRMutator, substitute
from ..stmt import For, ForKind, seq
from .common import freshen, map_funcs

MAX_UNROLL = 512


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
            copies.append(freshen(body) if k else body)
        return seq(*copies)


def _unroll_func(f: PrimFunc) -> PrimFunc:
    return _Unroll().visit_func(f)


def unroll_loop(mod: IRModule) -> IRModule:
    return map_funcs(mod, _unroll_func)
