"""loop_partition: a loop marked `pragma_loop_partition` is split into a main loop in which
its bound guards are known to hold (so they are gone) and a tail loop that keeps them.

Before: `AttrStmt(iv, "pragma_loop_partition", v, For(x, min, extent, body))` (a schedule's
`stage.pragma(axis, "loop_partition")`), the guards inside `body` being `IfThenElse`
conditions. After: no such attribute. A guard term `a < b` is used when `a = c * x + r` with
c a positive constant, r not depending on x, b depending neither on x nor on a loop inside x:
it holds for every iteration of the loops inside x when `x < (b - 1 - max(r) + c) // c`
(max(r) over those loops' ranges). With T the least such bound over the usable terms,

    for x in [min, T'): body, the usable terms dropped      (T' = T clamped to the loop)
    for x' in [0, min + extent - T'): body[x := x' + T']      (guards kept)

A loop with no usable term, or a marked statement that is not a loop, is left as it is (less
the attribute). A split of a symbolic extent by a constant factor (an M-tile loop over
`(n + 3) // 4` tiles, each guarded by `4 * x + i < n`) gets a guard-free main loop over
`n // 4` tiles and a tail of at most one tile.
"""
from __future__ import annotations

from typing import Dict, List

from ...arith import Analyzer, simplify
from ...ir.module import IRModule
from .. import expr as E
from ..function import PrimFunc
from ..functor import IRMutator, collect_vars, substitute
from ..stmt import For, IfThenElse, seq
from .common import conjuncts, freshen, map_funcs

KEY = "pragma_loop_partition"


def _conj(terms):
    out = terms[0]
    for t in terms[1:]:
        out = E.logical_and(out, t)
    return out


def _uses(e, vars_) -> bool:
    ids = {id(v) for v in vars_}
    return any(id(v) in ids for v in collect_vars(e))


class _Guards:
    """The usable guard terms of the IfThenElse statements inside the loop over `x`: for each
    statement (by id) the terms that hold below the bound, and the bounds."""

    def __init__(self, x: E.Var):
        self.x = x
        self.usable: Dict[int, List[int]] = {}
        self.bounds: List[E.PrimExpr] = []

    def scan(self, s, loops: List[For]) -> None:
        if isinstance(s, For):
            self.scan(s.body, loops + [s])
            return
        if isinstance(s, IfThenElse):
            used = [k for k, t in enumerate(conjuncts(s.condition)) if self._bound(t, loops)]
            if id(s) in self.usable:  # one node in two places: what is usable in both
                used = [k for k in used if k in self.usable[id(s)]]
            self.usable[id(s)] = used
            self.scan(s.then_case, loops)
            if s.else_case is not None:
                self.scan(s.else_case, loops)
            return
        for field in ("body", "seq"):
            child = getattr(s, field, None)
            if isinstance(child, tuple):
                for c in child:
                    self.scan(c, loops)
            elif child is not None:
                self.scan(child, loops)

    def _bound(self, term, loops: List[For]) -> bool:
        if not isinstance(term, E.LT) or not term.a.dtype.is_integer:
            return False
        inner = [lp.loop_var for lp in loops]
        a, b = term.a, term.b
        if _uses(b, [self.x] + inner):
            return False
        step = simplify(substitute(a, {self.x: self.x + 1}) - a)
        if not isinstance(step, E.IntImm) or step.value <= 0:
            return False
        rest = simplify(a - step * self.x)
        if _uses(rest, [self.x]):
            return False
        ana = Analyzer()
        for lp in loops:
            if _uses(lp.min, [self.x]) or _uses(lp.extent, [self.x]):
                return False
            ana.bind(lp.loop_var, (lp.min, simplify(lp.min + lp.extent - 1)))
        hi = ana.int_set(rest).hi
        if hi is None or _uses(hi, inner):
            return False
        c = step.value
        self.bounds.append(simplify(E.FloorDiv(b - 1 - hi + c, E.const(c, b.dtype))))
        return True


class _DropGuards(IRMutator):
    def __init__(self, usable: Dict[int, List[int]]):
        super().__init__()
        self.usable = usable

    def visit_IfThenElse(self, s):
        used = self.usable.get(id(s))
        out = self.generic_visit(s)
        if not used:
            return out
        kept = [t for k, t in enumerate(conjuncts(s.condition)) if k not in used]
        if kept:
            return IfThenElse(_conj(kept), out.then_case, out.else_case)
        return out.then_case


def _least(bounds: List[E.PrimExpr]) -> E.PrimExpr:
    """The minimum of `bounds`, dropping those provably not below another."""
    kept: List[E.PrimExpr] = []
    for b in bounds:
        if any(Analyzer().can_prove(k <= b) for k in kept):
            continue
        kept = [k for k in kept if not Analyzer().can_prove(b <= k)] + [b]
    out = kept[0]
    for k in kept[1:]:
        out = E.Min(out, k)
    return out


def _partition(loop: For):
    guards = _Guards(loop.loop_var)
    guards.scan(loop.body, [])
    if not guards.bounds:
        return loop
    x = loop.loop_var
    end = simplify(loop.min + loop.extent)
    split = _least(guards.bounds)
    if not Analyzer().can_prove(split <= end):
        split = E.Min(end, split)
    if not Analyzer().can_prove(loop.min <= split):
        split = E.Max(loop.min, split)
    split = simplify(split)
    main_body = _DropGuards(guards.usable).visit(loop.body)
    main = For(x, loop.min, simplify(split - loop.min), loop.kind, main_body,
               loop.thread_binding, loop.annotations)
    t = E.Var(x.name + ".tail", x.dtype)
    tail_body = freshen(substitute(loop.body, {x: t + split}))
    tail = For(t, E.const(0, x.dtype), simplify(end - split), loop.kind, tail_body,
               loop.thread_binding, loop.annotations)
    return seq(main, tail)


class _Partition(IRMutator):
    def visit_AttrStmt(self, s):
        if s.key != KEY:
            return self.generic_visit(s)
        body = s.body
        if isinstance(body, For) and body.thread_binding is None:
            body = _partition(body)
        return self.visit(body)


def _partition_func(f: PrimFunc) -> PrimFunc:
    return _Partition().visit_func(f)


def loop_partition(mod: IRModule) -> IRModule:
    return map_funcs(mod, _partition_func)
