"""inject_double_buffer: a buffer written under `AttrStmt(data, "double_buffer_scope", 1, ...)`
(te's Stage.double_buffer) gets two halves used in turn by the iterations of the loop around
that statement, and the write of iteration i + 1 moves ahead of the reads of iteration i
(a prefetch), as TVM's InjectDoubleBuffer with split_loop = 1.

Before (flat accesses; the Allocate inside the loop, the producer in the scope attr):

    for i in range(n):
        allocate B[E]
        attr B "double_buffer_scope": <write B for i>
        <read B for i>

After (the allocation lifted around the loop and doubled; slot i % 2 is read, the producer of
i + 1 writes slot (i + 1) % 2 under attr "double_buffer_write"):

    allocate B[2 * E]
    <write B for 0 into slot 0>
    for i in range(n - 1):
        attr B "double_buffer_write": <write B for i + 1 into slot (i + 1) % 2>
        <read B for i from slot i % 2>
    <read B for n - 1 from slot (n - 1) % 2>

all under `if n > 0` unless the extent is known to be positive. Each copy of a statement
defines its own variables. Before: storage_flatten (1-D accesses), loops starting at 0. After:
no "double_buffer_scope" attr remains.
"""
from __future__ import annotations

from typing import Dict, List

from ...arith import can_prove
from ...arith import simplify as _simplify
from ...ir.errors import InternalError
from ...ir.module import IRModule
from .. import expr as E
from ..buffer import Buffer
from ..function import PrimFunc
from ..functor import IRMutator, post_order_visit, substitute
from ..op import floormod
from ..stmt import Allocate, AttrStmt, BufferStore, For, IfThenElse, Stmt, no_op, seq
from .common import freshen, map_funcs

SCOPE, WRITE = "double_buffer_scope", "double_buffer_write"


class _Entry:
    """One double-buffered allocation: its doubled buffer, the size of one half and the
    loop whose iterations alternate between the halves."""

    def __init__(self, buffer: Buffer, half: E.PrimExpr, depth: int):
        self.buffer, self.half, self.depth = buffer, half, depth
        self.loop: For = None  # type: ignore[assignment]
        self.switch: E.PrimExpr = None  # type: ignore[assignment]


class _Inject(IRMutator):
    def __init__(self, data_vars):
        self.data_vars = data_vars
        self.entries: Dict[E.Var, _Entry] = {}
        self.loops: List[For] = []
        self.prologue: Dict[int, List[Stmt]] = {}
        self.lifted: Dict[int, List[Buffer]] = {}
        self.write_var: Dict[E.Var, E.Var] = {}

    def visit_For(self, s: For):
        self.loops.append(s)
        try:
            new = self.generic_visit(s)
        finally:
            self.loops.pop()
        key = id(s)
        if key in self.prologue:
            new = self._split(new, self.prologue.pop(key))
        for buf in reversed(self.lifted.pop(key, [])):
            new = Allocate(buf, new)
        return new

    def _split(self, loop: For, prologue: List[Stmt]) -> Stmt:
        n = loop.extent
        last = _simplify(n - 1)
        main = For(loop.loop_var, loop.min, last, loop.kind, loop.body, loop.thread_binding,
                   loop.annotations)
        tail = freshen(substitute(_StripWrite().visit(loop.body), {loop.loop_var: last}))
        out = seq(*[freshen(p) for p in prologue], main, tail)
        if not can_prove(n > 0):
            out = IfThenElse(_simplify(n > 0), out)
        return out

    def visit_Allocate(self, s: Allocate):
        data = s.buffer.data
        if data not in self.data_vars:
            return self.generic_visit(s)
        b = s.buffer
        if b.ndim != 1:
            raise InternalError(f"inject_double_buffer: buffer '{b.name}' is not flat; run "
                                "storage_flatten first")
        half = b.shape[0]
        doubled = Buffer(b.name, b.data, b.dtype, (_simplify(half * 2),), b.strides,
                         b.elem_offset, b.scope, b.data_alignment, b.offset_factor)
        entry = _Entry(doubled, half, len(self.loops))
        self.entries[data] = entry
        body = self.visit(s.body)
        if entry.loop is None:
            raise InternalError(f"inject_double_buffer: '{b.name}' has no double_buffer_scope "
                                "inside a loop")
        self.lifted.setdefault(id(entry.loop), []).append(doubled)
        return body

    def visit_AttrStmt(self, s: AttrStmt):
        if s.key != SCOPE or s.node not in self.entries:
            return self.generic_visit(s)
        entry = self.entries[s.node]
        if entry.depth == 0 or len(self.loops) != entry.depth:
            raise InternalError(f"inject_double_buffer: the double_buffer_scope of "
                                f"'{s.node.name}' must be in the body of the loop that "
                                "allocates it")
        loop = self.loops[-1]
        entry.loop = loop
        i = loop.loop_var
        write = E.Var(i.name + ".db", i.dtype)
        entry.switch = floormod(i, 2)
        self.write_var[s.node] = write
        try:
            body = self.visit(s.body)
        finally:
            del self.write_var[s.node]
        zero = E.const(0, i.dtype)
        self.prologue.setdefault(id(loop), []).append(
            substitute(body, {write: zero, i: zero}))
        nxt = i + 1
        ahead = substitute(body, {i: nxt, write: floormod(nxt, 2)})
        return IfThenElse(nxt < loop.extent, AttrStmt(s.node, WRITE, E.const(1), ahead))

    def _index(self, data: E.Var, index: E.PrimExpr) -> E.PrimExpr:
        entry = self.entries[data]
        slot = self.write_var.get(data, entry.switch)
        if slot is None:
            raise InternalError(f"inject_double_buffer: '{data.name}' is accessed outside "
                                "the loop it is double-buffered in")
        return index + slot * entry.half

    def visit_BufferLoad(self, e: E.BufferLoad):
        e = self.generic_visit(e)
        data = e.buffer.data
        if data not in self.entries:
            return e
        entry = self.entries[data]
        return E.BufferLoad(entry.buffer, (self._index(data, e.indices[0]),), e.dtype)

    def visit_BufferStore(self, s: BufferStore):
        s = self.generic_visit(s)
        data = s.buffer.data
        if data not in self.entries:
            return s
        entry = self.entries[data]
        return BufferStore(entry.buffer, s.value, (self._index(data, s.indices[0]),))


class _StripWrite(IRMutator):
    """The loop body of the last iteration: no next iteration to prefetch."""

    def visit_IfThenElse(self, s: IfThenElse):
        if isinstance(s.then_case, AttrStmt) and s.then_case.key == WRITE \
                and s.else_case is None:
            return no_op()
        return self.generic_visit(s)


def _inject_func(f: PrimFunc) -> PrimFunc:
    data_vars = []
    post_order_visit(f.body, lambda n: data_vars.append(n.node)
                     if isinstance(n, AttrStmt) and n.key == SCOPE else None)
    if not data_vars:
        return f
    return _Inject(set(data_vars)).visit_func(f)


def inject_double_buffer(mod: IRModule) -> IRModule:
    return map_funcs(mod, _inject_func)
