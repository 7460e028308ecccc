"""Parallel loops for the LLVM host codegen, as TVM's LLVM backend makes them.

`for (i = min; i < min + extent; ++i) parallel body` becomes an internal function
`int32 <func>_compute_<k>(int32 task_id, TVMParallelGroupEnv* penv, void* cdata)` whose closure
`cdata` (a struct on the caller's stack) holds `min`, `extent` and every free variable of the
body; the caller runs `TVMBackendParallelLaunch(lambda, cdata, 0)` (0: all workers) and
returns its status if nonzero (after freeing its live workspaces; a task frees its own; the
runtime passes the failed task's error on). Task t of n runs the chunk
[t*c, min((t+1)*c, extent)) with c = ceil(extent / n). A parallel loop nested in another
runs serially inside its task.
"""
from __future__ import annotations

from llvmlite import ir

from ...tir import BufferLoad, BufferStore, Evaluate, free_vars, post_order_visit
from .types import I32, PARALLEL_ENV, PARALLEL_LAMBDA


class ParallelEmitter:
    """Parallel-loop half of the function emitter."""

    def parallel_for(self, s) -> None:
        captured = captured_vars(s)
        values = [self.expr(s.min), self.expr(s.extent)] + [self.expr_Var(v) for v in captured]
        closure_type = ir.LiteralStructType([v.type for v in values])
        cdata = self.entry_alloca(closure_type, align=8)
        for k, v in enumerate(values):
            self.b.store(v, self._field(cdata, closure_type, k))

        lam = ir.Function(self.ctx.module, PARALLEL_LAMBDA,
                          self.ctx.unique(f"{self.name}_compute"))
        lam.linkage = "internal"
        lam.attributes.add("nounwind")
        task_id, penv, data = lam.args
        sub = type(self)(self.ctx, lam, self.name, in_parallel=True)
        loaded = [sub.b.load(sub._field(data, closure_type, k), typ=v.type)
                  for k, v in enumerate(values)]
        for var, value in zip(captured, loaded[2:]):
            sub.vars[id(var)] = value
        lo, extent = loaded[0], loaded[1]
        itype = extent.type
        b = sub.b
        num_task = b.load(b.gep(penv, [ir.Constant(I32, 0), ir.Constant(I32, 1)], inbounds=True,
                                source_etype=PARALLEL_ENV), typ=I32)
        num_task, task = (b.sext(x, itype) if itype.width > 32 else x for x in (num_task, task_id))
        one = ir.Constant(itype, 1)
        chunk = b.sdiv(b.sub(b.add(extent, num_task), one), num_task)
        begin = sub.smin(b.mul(task, chunk), extent)
        end = sub.smin(b.add(begin, chunk), extent)

        def body(i):
            with sub.bound(s.loop_var, b.add(lo, i)):
                sub.stmt(s.body)

        sub.loop(begin, end, body, signed=True)
        sub.finish()

        rc = self.call_service("TVMBackendParallelLaunch", [lam, cdata, ir.Constant(I32, 0)])
        failed = self.b.icmp_signed("!=", rc, ir.Constant(I32, 0))
        with self.b.if_then(failed, likely=False):
            self.error_return(rc)  # the runtime passes the failed task's error on

    def _field(self, ptr, struct_type, k):
        return self.b.gep(ptr, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                          source_etype=struct_type)

    def smin(self, a, b):
        return self.b.select(self.b.icmp_signed("<", a, b), a, b)


def captured_vars(loop):
    """Free variables of a loop's body, including those in the elem_offset of its buffers."""
    found = {id(v): v for v in free_vars(loop.body, defined=[loop.loop_var])}

    def visit(node):
        if isinstance(node, (BufferLoad, BufferStore)):
            for v in free_vars(Evaluate(node.buffer.elem_offset)):
                found.setdefault(id(v), v)

    post_order_visit(loop.body, visit)
    return list(found.values())
