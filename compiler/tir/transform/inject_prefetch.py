"""inject_prefetch: the prefetches a schedule asked for (`Stage.prefetch`), one per read.

Before: `AttrStmt(data, "prefetch_scope", offset, <the loop of x, under its pragmas>)`, data
being the data Var of the buffer to prefetch; the loops inside are vectorized and unrolled.
After: no such attribute. In the loop, each run of statements with no loop inside that reads the
buffer at an index depending on x is preceded by one `tir.prefetch(address_of(buf[i']), 0, 1, 1)`
per distinct index i' of the run: the index with x := min(x + offset, last x), what the read touches
`offset` iterations later (the last iterations fetch their own: no address past the buffer). A
vector read (a Ramp index) fetches the cache line of its first element. The fetches go to the
outer caches (locality 1), where they wait without evicting what the current iteration works on
in L1, and interleave with the work instead of arriving in a burst at the top of the loop.
A scope whose loop is no longer one loop (loop_partition split it) gets no prefetches.
"""
from __future__ import annotations

from typing import Dict, List, Set

from ...ir.module import IRModule
from .. import expr as E
from ..function import PrimFunc
from ..functor import IRMutator, collect_vars, post_order_visit, rebuild, substitute
from ..op import call_intrin
from ..stmt import (
    Allocate,
    AttrStmt,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    seq,
)
from .common import map_funcs

PREFETCH_SCOPE = "prefetch_scope"
# llvm.prefetch's locality: 1 (x86 prefetcht2), the outer caches.
LOCALITY = 1


def _loop_under(s: Stmt):
    while isinstance(s, AttrStmt):
        s = s.body
    return s if isinstance(s, For) else None


def _loop_holders(s: Stmt) -> Set[int]:
    """ids of `s` and of the statements inside it that have a loop inside (or are one)."""
    holders: Set[int] = set()

    def visit(n):
        if isinstance(n, For) or (isinstance(n, Stmt) and any(
                id(c) in holders for c in _children(n))):
            holders.add(id(n))
    post_order_visit(s, visit)
    return holders


def _children(s: Stmt):
    if isinstance(s, SeqStmt):
        return s.seq
    if isinstance(s, IfThenElse):
        return (s.then_case, s.else_case)
    return (getattr(s, "body", None),)


class _Fetches:
    """Prefetches of the reads of the buffer with data Var `data`, loop var `x` moved ahead."""

    def __init__(self, data: E.Var, x: E.Var, ahead: E.PrimExpr, body: Stmt):
        self.data, self.x, self.ahead = data, x, ahead
        self.holders = _loop_holders(body)   # one walk, not one per level of `inject`

    def before(self, stmts: List[Stmt]) -> List[Stmt]:
        """One prefetch per distinct index the loop-free `stmts` read the buffer at (indices
        using a variable bound inside them left out)."""
        found: Dict[str, tuple] = {}    # by index text: (moved index, buffer, its variables)
        bound = set()

        def visit(e):
            if isinstance(e, (LetStmt, E.Let)):
                bound.add(id(e.var))
            if not (isinstance(e, E.BufferLoad) and e.buffer.data is self.data
                    and len(e.indices) == 1):
                return
            index = e.indices[0]
            if isinstance(index, E.Ramp):
                index = index.base
            used = collect_vars(index)
            if index.dtype.lanes != 1 or not any(v is self.x for v in used):
                return
            moved = substitute(index, {self.x: self.ahead})
            found.setdefault(str(moved), (moved, e.buffer, used))

        for s in stmts:
            post_order_visit(s, visit)
        return [Evaluate(call_intrin(
            "int32", "tir.prefetch",
            call_intrin("handle", "tir.address_of", E.BufferLoad(buf, (i,))),
            0, LOCALITY, 1)) for i, buf, used in found.values()
            if not any(id(v) in bound for v in used)]

    def inject(self, s: Stmt) -> Stmt:
        """`s` with the prefetches before each run of loop-free statements."""
        if id(s) not in self.holders:
            return seq(*self.before([s]), s)
        if isinstance(s, SeqStmt):
            out: List[Stmt] = []
            run: List[Stmt] = []
            for item in s.seq + (None,):
                if item is not None and id(item) not in self.holders:
                    run.append(item)
                    continue
                out += self.before(run) + run
                run = []
                if item is not None:
                    out.append(self.inject(item))
            return seq(*out)
        if isinstance(s, IfThenElse):
            return rebuild(s, {"then_case": self.inject(s.then_case),
                               "else_case": s.else_case and self.inject(s.else_case)})
        if isinstance(s, (For, LetStmt, AttrStmt, Allocate)):
            return rebuild(s, {"body": self.inject(s.body)})
        return s


class _Inject(IRMutator):
    def visit_AttrStmt(self, s):
        if s.key != PREFETCH_SCOPE:
            return self.generic_visit(s)
        body = self.visit(s.body)
        loop = _loop_under(body)
        if loop is None:
            return body
        x = loop.loop_var
        ahead = E.Min(x + E.convert(s.value).astype(x.dtype), loop.min + loop.extent - 1)
        return _Fetches(s.node, x, ahead, body).inject(body)


def _inject_func(f: PrimFunc) -> PrimFunc:
    return _Inject().visit_func(f)


def inject_prefetch(mod: IRModule) -> IRModule:
    return map_funcs(mod, _inject_func)
