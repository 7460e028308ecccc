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

Accesses a thread makes only to its own elements need no barrier: when every access to a
buffer since the last barrier and in the statement uses one index (structurally equal) that
has, for each thread index launched with more than one thread, a component that is that index
alone (`rf[tx]`, `rf[tx + k]` with k free of thread indices), no two threads touch one element,
as TVM's ThreadSync assumes for equal indices. An accumulator in shared memory (`rf[tx] +=`
in a loop) so gets no barrier per iteration.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Tuple

from ...ir import IRModule
from ...ir.dtype import int32
from ...ir.structural_equal import structural_equal
from ..expr import Add, BufferLoad, Call, IntImm, StringImm, Var
from ..functor import post_order_visit, substitute
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
    planner = _Planner(launch_extents(func.body), _thread_vars(func.body))
    body = planner.plan(func.body, _State())
    return func if body is func.body else func.with_body(body)


# Accesses of a statement: shared buffer (its data var's identity) -> the index tuples used.
Accesses = Dict[int, List[Tuple]]


class _State:
    """Shared buffers read and written since the last barrier, with their indices."""

    def __init__(self, reads: Optional[Accesses] = None, writes: Optional[Accesses] = None):
        self.reads: Accesses = {b: list(i) for b, i in (reads or {}).items()}
        self.writes: Accesses = {b: list(i) for b, i in (writes or {}).items()}

    def copy(self) -> "_State":
        return _State(self.reads, self.writes)

    def add(self, reads: Accesses, writes: Accesses) -> None:
        for mine, new in ((self.reads, reads), (self.writes, writes)):
            for b, idx in new.items():
                mine.setdefault(b, []).extend(idx)


def _accesses(stmt: Stmt, canon: Dict[Var, Var]) -> Tuple[Accesses, Accesses]:
    """(read, written) shared buffers of `stmt` with the indices of each access, thread
    indices written as `canon` says."""
    reads: Accesses = {}
    writes: Accesses = {}

    def visit(node):
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer.scope == "shared":
            into = reads if isinstance(node, BufferLoad) else writes
            into.setdefault(id(node.buffer.data), []).append(
                tuple(substitute(i, canon) for i in node.indices))

    post_order_visit(stmt, visit)
    return reads, writes


def _thread_vars(body: Stmt) -> Tuple[Dict[Var, Var], Dict[int, str]]:
    """(canon, tags): canon maps each var of a thread loop whose var is the hardware index
    itself (loop forms "index" and "guard") to one var per threadIdx tag (the first such
    loop's), so that accesses through two loops bound to one tag compare equal; tags maps
    each canonical var (identity) to its tag."""
    launch = launch_extents(body)
    first: Dict[str, Var] = {}
    out: Dict[Var, Var] = {}

    def visit(node):
        if isinstance(node, For) and node.kind == ForKind.THREAD_BINDING and \
                node.thread_binding.thread_tag.startswith("threadIdx") and \
                loop_form(node, launch) in ("index", "guard"):
            out[node.loop_var] = first.setdefault(node.thread_binding.thread_tag,
                                                  node.loop_var)

    post_order_visit(body, visit)
    return out, {id(v): tag for tag, v in first.items()}


class _Planner:
    def __init__(self, launch, thread_vars: Tuple[Dict[Var, Var], Dict[int, str]]):
        self.launch = launch
        self.canon, self.tags = thread_vars
        self.many = {tag for tag, ext in launch.items() if tag.startswith("threadIdx") and
                     not (isinstance(ext, IntImm) and ext.value == 1)}

    def _private(self, index: Tuple) -> bool:
        """Whether distinct threads of a block always touch distinct elements at `index`."""
        covered = set()
        for e in index:
            terms = (e.a, e.b) if isinstance(e, Add) else (e,)
            for i, t in enumerate(terms):
                rest = terms[:i] + terms[i + 1:]
                if isinstance(t, Var) and id(t) in self.tags and \
                        not any(self._uses_thread(r) for r in rest):
                    covered.add(self.tags[id(t)])
        return self.many <= covered

    def _uses_thread(self, e) -> bool:
        found = []
        post_order_visit(e, lambda n: found.append(n) if id(n) in self.tags else None)
        return bool(found)

    def _conflict(self, new: List[Tuple], old: List[Tuple]) -> bool:
        """Whether accesses `new` may touch elements other threads touched in `old`."""
        first = new[0]
        return not (self._private(first) and all(
            structural_equal(first, i) for i in new[1:] + old))

    def plan(self, s: Stmt, st: _State) -> Stmt:
        if isinstance(s, Evaluate) and isinstance(s.value, Call) and \
                s.value.op == "tir.storage_sync":
            st.reads, st.writes = {}, {}  # a barrier already there
            return s
        reads, writes = _accesses(s, self.canon)
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
                        "serial") and reads.keys() & writes.keys()
            if transparent:
                body = self.plan(s.body, st)
                return s if body is s.body else _with_body(s, body)
            if repeated:
                first = st.copy()
                self.plan(s.body, first)
                entry = st.copy()
                entry.add(first.reads, first.writes)
                body = self.plan(s.body, entry)
                st.add(entry.reads, entry.writes)
                return s if body is s.body else _with_body(s, body)
        return self.unit(s, st, reads, writes)

    def unit(self, s: Stmt, st: _State, reads: Accesses, writes: Accesses) -> Stmt:
        hazards = [(b, idx, st.writes[b]) for b, idx in reads.items() if b in st.writes]
        for b, idx in writes.items():
            old = st.reads.get(b, []) + st.writes.get(b, [])
            if old:
                hazards.append((b, idx, old))
        if any(self._conflict(new, old) for _, new, old in hazards):
            fresh = _State(reads, writes)
            st.reads, st.writes = fresh.reads, fresh.writes
            return SeqStmt((barrier(), s))
        st.add(reads, writes)
        return s


def _with_body(s, body):

    return replace(s, body=body)
