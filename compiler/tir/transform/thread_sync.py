"""thread_sync: barriers for shared memory in device kernels, as TVM's tir.transform.ThreadSync
("shared").

Before: device kernels (attr calling_conv "device_kernel") whose "shared" buffers are written
by some threads and read by others (cache_read "shared" + compute_at under thread loops).
After: `Evaluate(tir.storage_sync("shared"))` stands before every statement that reads a shared
buffer written since the last barrier (read after write) and before every statement that
writes a shared buffer read or written since the last barrier (write after read/write), so
that no thread sees another's data half-written or has it overwritten while still reading it.
Other functions come back unchanged.

The kernel is walked in execution order with the shared buffers read and written since the
last barrier. A sequence, an allocation, a let and a thread loop that is the hardware index
(split_host_device `loop_form` "index") are walked into; a serial loop (or virtual thread)
whose body reads and writes one shared buffer is walked into with its loop-carried case (its
body is planned from the state before the loop merged with the state after one iteration, so
a barrier also separates one iteration's reads from the next one's writes). Everything else
(a store, a conditional, a guarded or strided thread loop, a loop that only reads or only
writes each buffer) is one unit: barriers go before it, never inside, so every barrier is
reached by all threads of the block.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Set, Tuple

from ...ir import IRModule
from ...ir.dtype import int32
from ..expr import BufferLoad, Call, StringImm
from ..functor import post_order_visit
from ..stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    LetStmt,
    SeqStmt,
    Stmt,
    seq,
)
from .common import map_funcs
from .split_host_device import launch_extents, loop_form


def thread_sync(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _sync_kernel(f)
                     if f.attrs.get("calling_conv") == "device_kernel" else f)


def barrier(scope: str = "shared") -> Evaluate:
    return Evaluate(Call(int32, "tir.storage_sync", (StringImm(scope),)))


def _sync_kernel(func):
    planner = _Planner(launch_extents(func.body))
    body = planner.plan(func.body, _State())
    return func if body is func.body else func.with_body(body)


class _State:
    def __init__(self, reads=(), writes=()):
        self.reads: Set[int] = set(reads)
        self.writes: Set[int] = set(writes)

    def copy(self) -> "_State":
        return _State(self.reads, self.writes)


def _accesses(stmt: Stmt) -> Tuple[Set[int], Set[int]]:
    """(read, written) shared buffers of `stmt`, by their data var's identity."""
    reads: Set[int] = set()
    writes: Set[int] = set()

    def visit(node):
        if isinstance(node, BufferLoad) and node.buffer.scope == "shared":
            reads.add(id(node.buffer.data))
        elif isinstance(node, BufferStore) and node.buffer.scope == "shared":
            writes.add(id(node.buffer.data))

    post_order_visit(stmt, visit)
    return reads, writes


class _Planner:
    def __init__(self, launch):
        self.launch = launch

    def plan(self, s: Stmt, st: _State) -> Stmt:
        if isinstance(s, Evaluate) and isinstance(s.value, Call) and \
                s.value.op == "tir.storage_sync":
            st.reads, st.writes = set(), set()  # a barrier already there
            return s
        reads, writes = _accesses(s)
        if not reads and not writes:
            return s
        if isinstance(s, SeqStmt):
            items = [self.plan(x, st) for x in s.seq]
            flat = []
            for x in items:
                flat.extend(x.seq if isinstance(x, SeqStmt) else [x])
            return s if all(a is b for a, b in zip(flat, s.seq)) and len(flat) == len(s.seq) \
                else seq(*flat)
        if isinstance(s, (Allocate, LetStmt, AttrStmt)):
            body = self.plan(s.body, st)
            return s if body is s.body else _with_body(s, body)
        if isinstance(s, For):
            transparent = s.kind == ForKind.THREAD_BINDING and \
                loop_form(s, self.launch) == "index"
            repeated = (s.kind != ForKind.THREAD_BINDING or loop_form(s, self.launch) ==
                        "serial") and reads & writes
            if transparent:
                body = self.plan(s.body, st)
                return s if body is s.body else _with_body(s, body)
            if repeated:
                first = st.copy()
                self.plan(s.body, first)
                entry = _State(st.reads | first.reads, st.writes | first.writes)
                body = self.plan(s.body, entry)
                st.reads |= entry.reads
                st.writes |= entry.writes
                return s if body is s.body else _with_body(s, body)
        return self.unit(s, st, reads, writes)

    def unit(self, s: Stmt, st: _State, reads, writes) -> Stmt:
        if reads & st.writes or writes & (st.reads | st.writes):
            st.reads, st.writes = set(reads), set(writes)
            return SeqStmt((barrier(), s))
        st.reads |= reads
        st.writes |= writes
        return s


def _with_body(s, body):

    return replace(s, body=body)
