"""Parallel launches (made by compiler/tir/transform/lower_parallel.py) for the LLVM host
codegen, as TVM's LLVM backend makes them.

`AttrStmt((v_0, ..., v_k-1), "tir.parallel_launch", num_task, body)` becomes an internal
function `int32 <func>_compute_<k>(int32 task_id, TVMParallelGroupEnv* penv, void* cdata)`
whose closure `cdata` (a struct on the caller's stack) holds v_0..v_k-1 in order and whose body
is `body` (`tir.parallel_task_id` reads `task_id`, `tir.parallel_num_task` `penv->num_task`);
the caller runs `TVMBackendParallelLaunch(lambda, cdata, num_task)` and returns its status if
nonzero (after freeing its live workspaces; a task frees its own; the runtime passes the failed
task's error on).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.errors import InternalError
from .types import I32, PARALLEL_ENV, PARALLEL_LAMBDA, PTR


class ParallelEmitter:
    """Parallel-launch half of the function emitter."""

    task_args = None  # (task_id, penv) inside a task function

    def parallel_launch(self, s) -> None:
        if self.task_args is not None:
            raise InternalError("llvm codegen: a parallel launch inside a parallel launch; "
                                "lower_parallel makes nested parallel loops serial")
        values = [self.expr_Var(v) for v in s.node]
        closure_type = ir.LiteralStructType([v.type for v in values])
        if values:
            cdata = self.entry_alloca(closure_type, align=8)
            for k, v in enumerate(values):
                self.b.store(v, self._field(cdata, closure_type, k))
        else:
            cdata = ir.Constant(PTR, None)

        lam = ir.Function(self.ctx.module, PARALLEL_LAMBDA,
                          self.ctx.unique(f"{self.name}_compute"))
        lam.linkage = "internal"
        lam.attributes.add("nounwind")
        task_id, penv, data = lam.args
        sub = type(self)(self.ctx, lam, self.name)
        sub.task_args = (task_id, penv)
        for k, var in enumerate(s.node):
            sub.vars[id(var)] = sub.b.load(sub._field(data, closure_type, k),
                                           typ=values[k].type)
        sub.stmt(s.body)
        sub.finish()

        rc = self.call_service("TVMBackendParallelLaunch", [lam, cdata, self.expr(s.value)])
        failed = self.b.icmp_signed("!=", rc, ir.Constant(I32, 0))
        with self.b.if_then(failed, likely=False):
            self.error_return(rc)  # the runtime passes the failed task's error on

    def intrin_parallel_task_id(self, e):
        return self._task_args(e)[0]

    def intrin_parallel_num_task(self, e):
        penv = self._task_args(e)[1]
        return self.b.load(self.b.gep(penv, [ir.Constant(I32, 0), ir.Constant(I32, 1)],
                                      inbounds=True, source_etype=PARALLEL_ENV), typ=I32)

    def _task_args(self, e):
        if self.task_args is None:
            raise InternalError(f"llvm codegen: {e.op} outside a parallel launch")
        return self.task_args

    def _field(self, ptr, struct_type, k):
        return self.b.gep(ptr, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                          source_etype=struct_type)
