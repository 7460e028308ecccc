"""The simplifier: one fixed-point driver running the rule tables of rules.py.

`simplify(node, bounds)` simplifies an expression, a statement, a PrimFunc or an IRModule.
`bounds` maps Vars to inclusive `(lo, hi)` pairs (ints or expressions) or to `Range`s; loop
variables inside statements get their loop's range automatically.

The driver works bottom-up: children first, then the rules of the node's class in table order;
when one fires, the new node's children are simplified and its rules tried again, until no rule
applies. Results are memoised per scope of bounds.
"""
from __future__ import annotations

import dataclasses
import sys
from contextlib import contextmanager
from typing import Any, Dict, List, Optional, Tuple

from ..ir.fields import field_names
from ..ir.module import IRModule
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.function import PrimFunc
from ..tir.functor import IRMutator, chain_of, rebuild, rebuild_chain, substitute
from .interval import IntBound, bound_of_normalized, normalize_ranges, use_simplifier
from .keys import KeyCache
from .linear import is_linear_dtype
from .rules import rules_by_class

_RULES = rules_by_class()
_MAX_STEPS = 64
DEEP_TREE_RECURSION_LIMIT = 20000  # Python frames allowed while simplifying
_LEAVES = (E.Var, E.IntImm, E.FloatImm, E.StringImm)
_CHAIN = (E.Add, E.Sub, E.Mul)


class Context:
    """What the rules may ask: structural equality and bounds of expressions."""

    def __init__(self, bounds: Optional[Dict[Any, Any]] = None):
        self.keys = KeyCache()
        self.ranges = normalize_ranges(bounds)
        self.memo: Dict[int, Tuple[Any, Any]] = {}

    # ---- scopes ----------------------------------------------------------------------------
    def bind(self, var: E.Var, lo, hi) -> Optional[Tuple]:
        """Give `var` the inclusive range [lo, hi]; returns what to pass to `unbind`."""
        old = self.ranges.get(var)
        self.ranges.update(normalize_ranges({var: (lo, hi)}))
        self.memo.clear()
        return old

    def unbind(self, var: E.Var, old: Optional[Tuple]) -> None:
        if old is None:
            self.ranges.pop(var, None)
        else:
            self.ranges[var] = old
        self.memo.clear()

    def mark_simplified(self, node: E.PrimExpr) -> None:
        """Records a node a rule built in normal form (its children already simplified)."""
        self.memo[id(node)] = (node, node)

    # ---- queries used by rule guards -------------------------------------------------------
    def simplify(self, e: E.PrimExpr) -> E.PrimExpr:
        return _expr(E.convert(e), self)

    def int_bound(self, e: E.PrimExpr) -> IntBound:
        """Integer bounds of `e` under the current ranges (symbolic ranges are used too)."""
        e = self.simplify(e)
        if isinstance(e, E.IntImm):
            return IntBound(e.value, e.value)
        lo, hi = bound_of_normalized(e, self.ranges, symbolic=False)
        if (lo is None or hi is None) and self.ranges and _has_symbolic(self.ranges):
            slo, shi = bound_of_normalized(e, self.ranges, symbolic=True)
            if lo is None and slo is not None:
                lo = slo if isinstance(slo, int) else bound_of_normalized(slo, {}, False)[0]
            if hi is None and shi is not None:
                hi = shi if isinstance(shi, int) else bound_of_normalized(shi, {}, False)[1]
        return IntBound(lo, hi)

    def le(self, a, b) -> bool:
        """Provably a <= b."""
        hi = self.int_bound(E.binary(E.Sub, a, b)).hi
        return hi is not None and hi <= 0

    def lt(self, a, b) -> bool:
        """Provably a < b."""
        hi = self.int_bound(E.binary(E.Sub, a, b)).hi
        return hi is not None and hi < 0

    def ge0(self, e) -> bool:
        """Provably e >= 0."""
        lo = self.int_bound(e).lo
        return lo is not None and lo >= 0


def _has_symbolic(ranges) -> bool:
    return any(not (x is None or isinstance(x, int)) for r in ranges.values() for x in r)


# ---- expressions ----------------------------------------------------------------------------
def _expr(e: E.PrimExpr, ctx: Context) -> E.PrimExpr:
    if isinstance(e, _LEAVES):
        return e
    hit = ctx.memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    out = _rewrite(_children(e, ctx), ctx)
    ctx.memo[id(e)] = (e, out)
    ctx.memo[id(out)] = (out, out)
    return out


def _children(e: Any, ctx: Context) -> Any:
    """`e` with its expression children simplified."""
    if isinstance(e, (E.EqualOp, E.NotEqualOp)):
        e = e.asobject()
    if isinstance(e, _LEAVES) or not dataclasses.is_dataclass(e):
        return e
    if isinstance(e, E.Reduce):
        return _reduce(e, ctx)
    # Inside a linear chain (+, -, * of one integer dtype) only the leaves are simplified here;
    # the chain's root is put in canonical form once, which keeps long sums linear in time.
    chain = type(e) in _CHAIN and is_linear_dtype(e.dtype)
    changes = {}
    for name in field_names(type(e)):
        old = getattr(e, name)
        if chain and type(old) in _CHAIN and old.dtype == e.dtype:
            hit = ctx.memo.get(id(old))
            new = hit[1] if hit is not None and hit[0] is old else _children(old, ctx)
        elif isinstance(old, E.PrimExpr):
            new = _expr(old, ctx)
        elif isinstance(old, tuple) and old and all(isinstance(v, E.PrimExpr) for v in old):
            new = tuple(_expr(v, ctx) for v in old)
            new = old if all(a is b for a, b in zip(new, old)) else new
        else:
            continue
        if new is not old:
            changes[name] = new
    return rebuild(e, changes) if changes else e


def _reduce(e: E.Reduce, ctx: Context) -> E.Reduce:
    """A reduction's source and condition, simplified with its axes' ranges."""
    saved = [(iv.var, ctx.bind(iv.var, iv.dom.min, iv.dom.min + iv.dom.extent - 1))
             for iv in e.axis if iv.dom is not None]
    try:
        source = tuple(_expr(s, ctx) for s in e.source)
        cond = _expr(e.condition, ctx)
    finally:
        for var, old in reversed(saved):
            ctx.unbind(var, old)
    if all(a is b for a, b in zip(source, e.source)) and cond is e.condition:
        return e
    return dataclasses.replace(e, source=source, condition=cond)


def _rewrite(e: E.PrimExpr, ctx: Context) -> E.PrimExpr:
    for _ in range(_MAX_STEPS):
        for rule in _RULES.get(type(e), ()):
            new = rule.apply(e, ctx, ctx.keys.equal)
            if new is None or new is e or ctx.keys.equal(new, e):
                continue
            e = _children(new, ctx)
            break
        else:
            return e
    return e


def simplify_expr(e, ctx: Optional[Context] = None) -> E.PrimExpr:
    """One bottom-up pass of the driver over an expression (no bounds unless `ctx` has them)."""
    return _expr(E.convert(e), ctx if ctx is not None else Context())


# ---- statements -----------------------------------------------------------------------------
class _StmtSimplifier(IRMutator):
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def visit(self, node: Any) -> Any:
        if isinstance(node, E.PrimExpr):
            return _fixed_point(node, self.ctx)
        return super().visit(node)

    def visit_For(self, s: S.For) -> S.Stmt:
        lo, extent = self.visit(s.min), self.visit(s.extent)
        is_thread = s.thread_binding is not None or s.kind == S.ForKind.THREAD_BINDING
        if isinstance(extent, E.IntImm) and extent.value <= 0 and not is_thread:
            return S.no_op()
        if E.is_const_int(extent, 1) and not is_thread:
            return self.visit(substitute(s.body, {s.loop_var: lo}))
        old = self.ctx.bind(s.loop_var, lo, E.binary(E.Sub, E.binary(E.Add, lo, extent), 1))
        try:
            body = self.visit(s.body)
        finally:
            self.ctx.unbind(s.loop_var, old)
        if lo is s.min and extent is s.extent and body is s.body:
            return s
        return dataclasses.replace(s, min=lo, extent=extent, body=body)

    def visit_chain(self, s: S.Stmt) -> S.Stmt:
        """A chain of LetStmt/AttrStmt/AssertStmt, walked in a loop (a packed function's
        argument checks nest hundreds deep): a let of a constant or a variable is substituted
        into what follows and dropped, an assert whose condition is true is dropped, a let of
        an integer and a thread extent give their variable a range until the chain ends."""
        heads, tail = chain_of(s)
        vmap: Dict[E.Var, E.PrimExpr] = {}
        scopes: List[Tuple[E.Var, Any, bool]] = []  # (var, old range, always unbind)
        changes: List[Optional[Dict[str, Any]]] = []
        try:
            for h in heads:
                changes.append(self.head(h, vmap, scopes))
            body = self.visit(substitute(tail, vmap) if vmap else tail)
        finally:
            for var, old, always in reversed(scopes):
                if always or old is not None or var in self.ctx.ranges:
                    self.ctx.unbind(var, old)
        return rebuild_chain(heads, changes, body)

    visit_LetStmt = visit_AttrStmt = visit_AssertStmt = visit_chain

    def head(self, h: S.Stmt, vmap, scopes) -> Optional[Dict[str, Any]]:
        """The changed fields of one head of a chain (None: drop it), its variable's range
        pushed on `scopes`, a folded let's value put in `vmap`."""

        def sub(x):
            return substitute(x, vmap) if vmap else x

        if isinstance(h, S.LetStmt):
            value = self.visit(sub(h.value))
            if isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
                vmap[h.var] = value
                return None
            old = None
            if value.dtype.is_integer and value.dtype.lanes == 1:
                lo, hi = self.ctx.int_bound(value)
                old = self.ctx.bind(h.var, lo, hi)
            scopes.append((h.var, old, False))
            return {} if value is h.value else {"value": value}
        if isinstance(h, S.AttrStmt):
            value = self.visit(sub(h.value))
            iv = h.node
            if h.key in ("thread_extent", "virtual_thread") and isinstance(iv, E.IterVar):
                scopes.append((iv.var, self.ctx.bind(iv.var, 0, E.binary(E.Sub, value, 1)),
                               True))
            return {} if value is h.value else {"value": value}
        cond = self.visit(sub(h.condition))
        if E.is_const_int(cond, 1):
            return None
        message = tuple(self.visit(sub(p)) if isinstance(p, E.PrimExpr) else p
                        for p in h.message)
        change: Dict[str, Any] = {}
        if cond is not h.condition:
            change["condition"] = cond
        if any(a is not b for a, b in zip(message, h.message)):
            change["message"] = message
        return change

    def visit_IfThenElse(self, s: S.IfThenElse) -> S.Stmt:
        cond = self.visit(s.condition)
        if isinstance(cond, E.IntImm):
            if cond.value:
                return self.visit(s.then_case)
            return self.visit(s.else_case) if s.else_case is not None else S.no_op()
        then = self.visit(s.then_case)
        other = self.visit(s.else_case) if s.else_case is not None else None
        if cond is s.condition and then is s.then_case and other is s.else_case:
            return s
        return S.IfThenElse(cond, then, other)

    def visit_SeqStmt(self, s: S.SeqStmt) -> S.Stmt:
        kids: List[S.Stmt] = [self.visit(x) for x in s.seq]
        if all(a is b for a, b in zip(kids, s.seq)):
            return s
        kept = [k for k in kids if not _is_no_op(k)]
        return S.seq(*kept) if kept else S.no_op()


def _is_no_op(s: S.Stmt) -> bool:
    return isinstance(s, S.Evaluate) and isinstance(s.value, E.IntImm)


def _fixed_point(e: E.PrimExpr, ctx: Context) -> E.PrimExpr:
    """Driver passes until the expression no longer changes (makes simplify idempotent)."""
    for _ in range(4):
        out = _expr(e, ctx)
        if out is e or ctx.keys.equal(out, e):
            return out
        e = out
    return e


def simplify_stmt(stmt: S.Stmt, bounds: Optional[Dict[Any, Any]] = None) -> S.Stmt:
    """Every expression simplified; `if True`/`if False` resolved, loops of extent 0 dropped,
    loops of extent 1 replaced by their body with the loop variable set to the loop's min."""
    with _deep_trees_allowed():
        return _StmtSimplifier(Context(bounds)).visit(stmt)


@contextmanager
def _deep_trees_allowed():
    """Raises the recursion limit to DEEP_TREE_RECURSION_LIMIT while the block runs (long sums
    are deep trees and the driver recurses on them), then restores the caller's limit."""
    old = sys.getrecursionlimit()
    if old < DEEP_TREE_RECURSION_LIMIT:
        sys.setrecursionlimit(DEEP_TREE_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def simplify(node: Any, bounds: Optional[Dict[Any, Any]] = None) -> Any:
    """Simplify an expression, statement, PrimFunc or IRModule (see the module docstring)."""
    if isinstance(node, IRModule):
        return node.with_functions({k: simplify(f, bounds) for k, f in node.items()})
    if isinstance(node, PrimFunc):
        body = simplify_stmt(node.body, bounds)
        return node if body is node.body else node.with_body(body)
    if isinstance(node, S.Stmt):
        return simplify_stmt(node, bounds)
    with _deep_trees_allowed():
        return _fixed_point(E.convert(node), Context(bounds))


use_simplifier(simplify_expr)
