"""lower_checked_index: every `tir.checked_index` becomes a wrapped index guarded by an assert.

Before: loop IR (the pipeline runs it after vectorize: a loop whose stores hold a check that
depends on its variable stayed serial; an invariant check is a scalar in a vector store),
possibly with calls `tir.checked_index(j, n, op, axis)` (topi.take with
mode "raise": an index that must lie in [-n, n), negative ones counting from the end).
After: no such call is left. Each became `select(j < 0, j + n, j)`, and the statement storing
it is preceded by

    AssertStmt(j >= -n && j < n, "IndexError",
               "take: index <j> out of range [-n, n) on axis <axis>")

placed as far out as the loops allow: above every loop (directly around it) whose variable
the check does not use, never above another kind of statement (a branch, a let, an allocation,
a sequence: what came first in a sequence may compute the indices). So an embedding lookup
`out[i, k] = W[idx[i], k]` checks `idx[i]` once per row, outside the loop over `k`. A check
under `tir.if_then_else` or `select` only holds where the branch is taken: its condition
becomes `if_then_else(branch condition, in range, true)`, evaluating the index only there.
Inside a GPU kernel (under a thread-bound loop or thread extent), where an error cannot be
raised, inside a Let or Reduce expression, and outside a stored value, the index is clamped
into range instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from ...ir import IRModule
from .. import expr as E
from ..functor import IRMutator, collect_vars
from ..stmt import AssertStmt, AttrStmt, BufferStore, For, ForKind, Stmt
from .common import map_funcs

CHECKED_INDEX = "tir.checked_index"


def lower_checked_index(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _Lower().visit_func(f))


@dataclass
class _Check:
    guards: Tuple[E.PrimExpr, ...]
    index: E.PrimExpr
    extent: E.PrimExpr
    op: str
    axis: int

    def stmt(self, body: Stmt) -> AssertStmt:
        j, n = self.index, self.extent
        cond = E.logical_and(j >= -n, j < n)
        if self.guards:
            guard = self.guards[0]
            for g in self.guards[1:]:
                guard = E.logical_and(guard, g)
            cond = E.Call(cond.dtype, "tir.if_then_else", (guard, cond, E.const(True)))
        tail = f") on axis {self.axis}"
        if isinstance(n, E.IntImm):
            parts = (f"{self.op}: index ", j, f" out of range [-{n.value}, {n.value}{tail}")
        else:
            parts = (f"{self.op}: index ", j, " out of range [-", n, ", ", n, tail)
        return AssertStmt(cond, "IndexError", parts, body)


def _wrapped(j: E.PrimExpr, n: E.PrimExpr) -> E.PrimExpr:
    zero = E.make_const(j.dtype, 0)
    return E.Select(j < zero, j + n, j)


def _clamped(j: E.PrimExpr, n: E.PrimExpr) -> E.PrimExpr:
    zero, one = E.make_const(j.dtype, 0), E.make_const(j.dtype, 1)
    return E.Min(E.Max(_wrapped(j, n), zero), n - one)


class _Index(IRMutator):
    """Rewrites the checked indices of one stored value (or index), collecting their checks
    in evaluation order (an index's own checks first)."""

    def __init__(self, clamp: bool):
        self.clamp = clamp
        self.guards: List[E.PrimExpr] = []
        self.checks: List[_Check] = []

    def branches(self, cond, then, other):
        self.guards.append(cond)
        then_new = self.visit(then)
        self.guards[-1] = E.logical_not(cond)
        other_new = self.visit(other)
        self.guards.pop()
        return then_new, other_new

    def visit_Call(self, e: E.Call):
        if e.op == "tir.if_then_else":
            cond = self.visit(e.args[0])
            then, other = self.branches(cond, e.args[1], e.args[2])
            if all(a is b for a, b in zip((cond, then, other), e.args)):
                return e
            return E.Call(e.dtype, e.op, (cond, then, other))
        if e.op != CHECKED_INDEX:
            return self.generic_visit(e)
        j, n = self.visit(e.args[0]), self.visit(e.args[1])
        if self.clamp:
            return _clamped(j, n)
        self.checks.append(_Check(tuple(self.guards), j, n, e.args[2].value, e.args[3].value))
        return _wrapped(j, n)

    def visit_Select(self, e: E.Select):
        cond = self.visit(e.condition)
        then, other = self.branches(cond, e.true_value, e.false_value)
        if cond is e.condition and then is e.true_value and other is e.false_value:
            return e
        return E.Select(cond, then, other)

    def _clamp_inside(self, e):
        outer, self.clamp = self.clamp, True
        try:
            return self.generic_visit(e)
        finally:
            self.clamp = outer

    visit_Let = visit_Reduce = _clamp_inside


class _Lower(IRMutator):
    def __init__(self):
        self.device = 0      # > 0 inside a GPU kernel's thread axes

    def visit(self, node):
        if isinstance(node, Stmt):
            new, checks = self.lower(node)
            return _place(new, checks)
        return super().visit(node)

    def visit_Call(self, e: E.Call):
        """A checked index outside a stored value (none comes from take): clamped."""
        e = self.generic_visit(e)
        return _clamped(e.args[0], e.args[1]) if e.op == CHECKED_INDEX else e

    def lower(self, s: Stmt):
        """(the statement, the checks still to place above it)."""
        if isinstance(s, BufferStore):
            rewriter = _Index(clamp=self.device > 0)
            value = rewriter.visit(s.value)
            indices = tuple(rewriter.visit(i) for i in s.indices)
            if value is s.value and all(a is b for a, b in zip(indices, s.indices)):
                return s, rewriter.checks
            return BufferStore(s.buffer, value, indices), rewriter.checks
        if isinstance(s, For):
            thread = s.kind == ForKind.THREAD_BINDING or s.thread_binding is not None
            self.device += thread
            try:
                lo, extent = self.visit(s.min), self.visit(s.extent)
                body, checks = self.lower(s.body)
            finally:
                self.device -= thread
            inside = [c for c in checks if _uses(c, s.loop_var)]
            body = _place(body, inside)
            outside = [c for c in checks if not _uses(c, s.loop_var)]
            if lo is s.min and extent is s.extent and body is s.body:
                return s, outside
            return For(s.loop_var, lo, extent, s.kind, body, s.thread_binding,
                       s.annotations), outside
        if isinstance(s, AttrStmt) and s.key in ("thread_extent", "virtual_thread"):
            self.device += 1
            try:
                return self.generic_visit(s), []
            finally:
                self.device -= 1
        return self.generic_visit(s), []


def _uses(check: _Check, var: E.Var) -> bool:
    exprs = (check.index, check.extent) + check.guards
    return any(v is var for e in exprs for v in collect_vars(e))


def _place(body: Stmt, checks: List[_Check]) -> Stmt:
    for c in reversed(checks):
        body = c.stmt(body)
    return body
