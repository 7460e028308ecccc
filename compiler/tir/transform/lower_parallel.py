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
"""
from __future__ import annotations

from typing import Dict, List

from ...ir import IRModule
from ...ir.dtype import int32
from .. import (
    AttrStmt,
    BufferLoad,
    BufferStore,
    Call,
    Div,
    Evaluate,
    For,
    ForKind,
    IntImm,
    IRMutator,
    LetStmt,
    Min,
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


def lower_parallel(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerParallel().visit_func(f)
                     if f.attrs.get("calling_conv") == "packed" else f)


class _LowerParallel(IRMutator):
    def visit_For(self, s: For):
        if s.kind != ForKind.PARALLEL:
            return self.generic_visit(s)
        return outline(s, _Serialize().visit(s.body))


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
