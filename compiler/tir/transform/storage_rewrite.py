"""storage_rewrite: allocations whose lifetimes do not overlap share one allocation.

Before: 1-D buffers (after storage_flatten). Looks at each run of nested `Allocate`s around a
sequence of statements; a buffer's lifetime is the span of sequence elements that use it.
Two buffers of the same dtype and scope, with constant sizes and disjoint lifetimes, are merged:
the later one uses the earlier one's memory, whose size becomes the larger of the two.
A buffer passed whole to a call (a Buffer argument of `tir.call_packed`, or its data var used
as a value) is never merged: the callee sees its declared shape.
After: fewer (never more) Allocates; every access is on a buffer still allocated around it.
"""
from __future__ import annotations

from typing import Dict, List

from ...ir.module import IRModule
from .. import expr as E
from ..buffer import Buffer
from ..function import PrimFunc
from ..functor import IRMutator, post_order_visit
from ..stmt import Allocate, BufferStore, SeqStmt
from .common import map_funcs


def _uses(stmt) -> set:
    found = set()

    def fn(n):
        if isinstance(n, (E.BufferLoad, BufferStore)):
            found.add(id(n.buffer.data))
        elif isinstance(n, E.Call):
            found.update(id(a.data) for a in n.args if isinstance(a, Buffer))

    post_order_visit(stmt, fn)
    return found


def _passed_whole(stmt) -> set:
    """Data vars of buffers handed to calls as a whole (Buffer arguments, bare data vars)."""
    found = set()

    def fn(n):
        if isinstance(n, E.Call):
            for a in n.args:
                if isinstance(a, Buffer):
                    found.add(id(a.data))
                elif isinstance(a, E.Var) and a.dtype.is_handle:
                    found.add(id(a))

    post_order_visit(stmt, fn)
    return found


class _Remap(IRMutator):
    def __init__(self, bmap: Dict[Buffer, Buffer]):
        self.bmap = bmap

    def visit_buffer(self, b):
        return self.bmap.get(b, b)


def _size(b: Buffer):
    return b.shape[0].value if b.ndim == 1 and isinstance(b.shape[0], E.IntImm) else None


class _Rewrite(IRMutator):
    def visit_Allocate(self, s):
        chain: List[Allocate] = []
        inner = s
        while isinstance(inner, Allocate):
            chain.append(inner)
            inner = inner.body
        new_inner = self.visit(inner)
        bufs = [a.buffer for a in chain]
        if isinstance(new_inner, SeqStmt) and len(bufs) > 1:
            kept, merged = _merge(bufs, new_inner)
            if merged is not new_inner:
                out = merged
                for b in reversed(kept):
                    out = Allocate(b, out)
                return out
        if new_inner is inner:
            return s
        out = new_inner
        for a in reversed(chain):
            out = Allocate(a.buffer, out, a.condition)
        return out


def _merge(bufs: List[Buffer], body: SeqStmt):
    uses = [_uses(x) for x in body.seq]
    whole = _passed_whole(body)
    span = {}
    for b in bufs:
        idx = [k for k, u in enumerate(uses) if id(b.data) in u]
        span[b] = (idx[0], idx[-1]) if idx and id(b.data) not in whole else None
    groups: List[List[Buffer]] = []
    last: List[int] = []
    for b in sorted(bufs, key=lambda b: (span[b] or (-1, -1))[0]):
        placed = False
        if span[b] is not None and _size(b) is not None:
            for g, members in enumerate(groups):
                rep = members[0]
                if (rep.dtype == b.dtype and rep.scope == b.scope and _size(rep) is not None
                        and last[g] < span[b][0]):
                    members.append(b)
                    last[g] = span[b][1]
                    placed = True
                    break
        if not placed:
            groups.append([b])
            last.append(span[b][1] if span[b] is not None else 10**9)
    if all(len(g) == 1 for g in groups):
        return bufs, body
    bmap: Dict[Buffer, Buffer] = {}
    kept: List[Buffer] = []
    for members in groups:
        rep = members[0]
        if len(members) > 1:
            size = max(_size(m) for m in members)
            rep = Buffer(rep.name, rep.data, rep.dtype, (E.const(size),), (), E.const(0),
                         rep.scope, rep.data_alignment, rep.offset_factor)
            for m in members:
                bmap[m] = rep
        kept.append(rep)
    return kept, _Remap(bmap).visit(body)


def _rewrite_func(f: PrimFunc) -> PrimFunc:
    return _Rewrite().visit_func(f)


def storage_rewrite(mod: IRModule) -> IRModule:
    return map_funcs(mod, _rewrite_func)
