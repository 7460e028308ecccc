"""lower_parallel: outline every PARALLEL loop of a packed function into a task body that the
codegens print as a lambda launched on the thread pool, as TVM's LLVM backend does.

Before: packed-form PrimFuncs (make_packed_api ran) whose bodies may hold `For` loops of kind
PARALLEL, possibly nested.
After: no `For` of kind PARALLEL is left. Each outermost one,
`for (i = min; i < min + extent; ++i) parallel body`, became

    AttrStmt(node=(v_0, ..., v_k-1), key="tir.parallel_launch", value=0,
      LetStmt(num_task, cast(T, tir.parallel_num_task()),
      LetStmt(task_id, cast(T, tir.parallel_task_id()),
      LetStmt(extent, <extent>,                                 (when not a constant)
      LetStmt(chunk, (extent + num_task - 1) / num_task,
      LetStmt(begin, min(task_id * chunk, extent),
      LetStmt(end, min(begin + chunk, extent),
        For(i, min + begin, end - begin, SERIAL, body))))))))

with T the loop variable's dtype. The node lists the closure: the Vars the task body reads but
does not define (including those in the elem_offset of the buffers it touches), in first-use
order. `value` is the num_task argument of `TVMBackendParallelLaunch(lambda, closure, value)`
(0: all workers). Codegens print the AttrStmt as a task function
`int lambda(int task_id, TVMParallelGroupEnv* penv, void* cdata)` whose closure struct holds
the node's Vars in order and whose body is the AttrStmt's body (`tir.parallel_task_id` reads
`task_id`, `tir.parallel_num_task` reads `penv->num_task`), and at the AttrStmt's place a
launch that returns its status when nonzero (first freeing the caller's live workspaces; a task
frees its own, and the runtime passes the failed task's error on). A PARALLEL loop nested in
another runs serially inside its task (its kind became SERIAL). Functions that are not packed
are left alone.

A parallel loop too small to pay for a launch stays a loop: its work is estimated as the element
stores it executes (a vector store counts its lanes; loops of constant extent multiply, the
branches of an `if` count their larger side). A PARALLEL loop whose work is known and below
PARALLEL_MIN_WORK becomes SERIAL and is not outlined; one whose extent is symbolic but whose
body's work is known is outlined with num_task `extent < ceil(PARALLEL_MIN_WORK / work) ? 1 : 0`,
so that a small call runs on the calling thread (the runtime runs a launch of one task inline).
Loops whose work cannot be estimated (a `while`, an external call, nested symbolic extents)
launch as before.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ...ir import IRModule
from ...ir.dtype import int32
from .. import (
    LT,
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferLoad,
    BufferStore,
    Call,
    Div,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRMutator,
    LetStmt,
    Min,
    Return,
    Select,
    SeqStmt,
    Stmt,
    Var,
    cast,
    const,
    free_vars,
    post_order_visit,
    rebuild,
)
from .common import map_funcs

PARALLEL_LAUNCH = "tir.parallel_launch"
# A parallel loop of fewer element stores than this runs on the calling thread: below it, waking
# the pool and gathering the tasks cost more than the work that the other threads would take.
PARALLEL_MIN_WORK = 1 << 14


def lower_parallel(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerParallel().visit_func(f)
                     if f.attrs.get("calling_conv") == "packed" else f)


class _LowerParallel(IRMutator):
    def visit_For(self, s: For):
        if s.kind != ForKind.PARALLEL:
            return self.generic_visit(s)
        body = _Serialize().visit(s.body)
        work = stmt_work(body)
        if work is not None and isinstance(s.extent, IntImm):
            if s.extent.value * work < PARALLEL_MIN_WORK:
                return rebuild(s, {"kind": ForKind.SERIAL, "body": body})
            return outline(s, body)
        launch = outline(s, body)
        if work is None or not s.extent.dtype.is_integer:
            return launch
        # extent * work < PARALLEL_MIN_WORK, without a product that could overflow
        per_iteration = max(work, 1)
        limit = (PARALLEL_MIN_WORK + per_iteration - 1) // per_iteration
        small = LT(s.extent, const(limit, s.extent.dtype))
        return rebuild(launch, {"value": Select(small, const(1, int32), const(0, int32))})


class _Serialize(IRMutator):
    """Nested PARALLEL loops become SERIAL (they run inside one task)."""

    def visit_For(self, s: For):
        s = self.generic_visit(s)
        return rebuild(s, {"kind": ForKind.SERIAL}) if s.kind == ForKind.PARALLEL else s


def outline(loop: For, body: Stmt) -> AttrStmt:
    """The launch AttrStmt of the parallel `loop` whose body became `body` (see the module
    docstring)."""
    t = loop.loop_var.dtype
    one = const(1, t)
    num_task, task_id = Var("num_task", t), Var("task_id", t)
    chunk, begin, end = Var("chunk", t), Var("begin", t), Var("end", t)
    extent = loop.extent if isinstance(loop.extent, IntImm) else Var("extent", t)
    start = begin if _is_zero(loop.min) else loop.min + begin
    task = For(loop.loop_var, start, end - begin, ForKind.SERIAL, body, None, loop.annotations)
    task = LetStmt(end, Min(begin + chunk, extent), task)
    task = LetStmt(begin, Min(task_id * chunk, extent), task)
    task = LetStmt(chunk, Div(extent + num_task - one, num_task), task)
    if extent is not loop.extent:
        task = LetStmt(extent, loop.extent, task)
    task = LetStmt(task_id, cast(t, Call(int32, "tir.parallel_task_id", ())), task)
    task = LetStmt(num_task, cast(t, Call(int32, "tir.parallel_num_task", ())), task)
    return AttrStmt(tuple(captured_vars(task)), PARALLEL_LAUNCH, const(0, int32), task)


def stmt_work(s: Stmt) -> Optional[int]:
    """Element stores that one execution of `s` makes (vector stores count their lanes; an `if`
    its larger branch); None when that is not a constant or `s` calls out of the kernel."""
    if isinstance(s, BufferStore):
        return s.value.dtype.lanes
    if isinstance(s, For):
        inner = stmt_work(s.body)
        if inner is None or not isinstance(s.extent, IntImm):
            return None
        return max(s.extent.value, 0) * inner
    if isinstance(s, SeqStmt):
        total = 0
        for part in s.seq:
            w = stmt_work(part)
            if w is None:
                return None
            total += w
        return total
    if isinstance(s, IfThenElse):
        a = stmt_work(s.then_case)
        b = stmt_work(s.else_case) if s.else_case is not None else 0
        return None if a is None or b is None else max(a, b)
    if isinstance(s, (LetStmt, AttrStmt, AssertStmt, Allocate)):
        return stmt_work(s.body)
    if isinstance(s, Return):
        return 0
    if isinstance(s, Evaluate):
        calls = []
        post_order_visit(s, lambda n: calls.append(n) if isinstance(n, Call) else None)
        return None if any("call" in c.op for c in calls) else 1
    return None


def captured_vars(task: Stmt) -> List[Var]:
    """Free variables of `task`, including those in the elem_offset of buffers it touches."""
    found: Dict[int, Var] = {id(v): v for v in free_vars(task)}
    offsets: Dict[int, object] = {}     # one elem_offset per buffer, constants skipped

    def visit(node) -> None:
        if isinstance(node, (BufferLoad, BufferStore)):
            offset = node.buffer.elem_offset
            if not isinstance(offset, IntImm):
                offsets.setdefault(id(node.buffer), offset)

    post_order_visit(task, visit)
    for offset in offsets.values():
        for v in free_vars(Evaluate(offset)):
            found.setdefault(id(v), v)
    return list(found.values())


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0
