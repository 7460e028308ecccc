"""hoist_guard: a bound guard moves above the loops that do not change it, marked `likely`.

Before: flattened loop IR; an uneven split leaves `for y: if x.outer * 5 + x.inner < 16: ...`.
After: a loop whose whole body is an IfThenElse without else, whose condition does not use
the loop's variable and reads no memory and calls nothing, became that IfThenElse around the
loop (repeatedly, as far out as it goes: `if likely(x.outer * 5 + x.inner < 16): for y: ...`).
The condition of a moved guard is wrapped in one `tir.likely` (it fails only at the edge of
the iteration space); a condition already under `tir.likely` is not wrapped again. Exact: the
loop does nothing when the condition is false, and the condition has no effects.
"""
from __future__ import annotations

from ...ir import IRModule
from .. import expr as E
from ..functor import IRMutator, collect_vars, post_order_visit
from ..stmt import For, ForKind, IfThenElse
from .common import map_funcs

LIKELY = "tir.likely"


def hoist_guard(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _Hoist().visit_func(f))


def _pure(cond) -> bool:
    found = []
    post_order_visit(cond, lambda n: found.append(n) if isinstance(n, E.BufferLoad) or (
        isinstance(n, E.Call) and n.op != LIKELY) else None)
    return not found


def _likely(cond):
    if isinstance(cond, E.Call) and cond.op == LIKELY:
        return cond
    return E.Call(cond.dtype, LIKELY, (cond,))


class _Hoist(IRMutator):
    def visit_For(self, s: For):
        body = self.visit(s.body)
        guard = body
        if (s.kind in (ForKind.SERIAL, ForKind.UNROLLED, ForKind.VECTORIZED,
                       ForKind.PARALLEL) and s.thread_binding is None
                and isinstance(guard, IfThenElse) and guard.else_case is None
                and guard.condition.dtype.lanes == 1 and _pure(guard.condition)
                and not any(v is s.loop_var for v in collect_vars(guard.condition))):
            loop = For(s.loop_var, s.min, s.extent, s.kind, guard.then_case, s.thread_binding,
                       s.annotations)
            return IfThenElse(_likely(guard.condition), loop)
        if body is s.body:
            return s
        return For(s.loop_var, s.min, s.extent, s.kind, body, s.thread_binding, s.annotations)
