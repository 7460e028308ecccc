"""Statements of the loop IR → LLVM, and `FunctionEmitter`, which builds one function.

`emit_packed_function(ctx, func, symbol)` defines `int32 __tvm_ffi_<symbol>(void* self, const
TVMFFIAny* args, int32 num_args, TVMFFIAny* result)` from a PrimFunc in packed form (see
compiler/tir/transform/make_packed_api.py). Stack memory (small Allocates, closures, message
buffers) is allocated in the entry block, so loops do not grow the stack.
"""
from __future__ import annotations

from contextlib import contextmanager
from functools import reduce

from llvmlite import ir

from ... import tir as kir
from ...ir.dtype import DType
from ...ir.errors import InternalError
from ...tir.transform.lower_parallel import PARALLEL_LAUNCH
from ...tir.transform.lower_workspace import FREE_ON_ERROR, MAX_STACK_BYTES
from ...transform import PassContext
from .expr import ExprEmitter
from .intrin import IntrinEmitter
from .llvm_calls import LLVMCallEmitter
from .packed import PackedEmitter
from .parallel import ParallelEmitter
from .types import (
    I32,
    NO_STRENGTH_REDUCE,
    SAFE_CALL,
    UNROLL_DISABLE,
    ModuleContext,
    memory_type,
    opaque,
)


class FunctionEmitter(ExprEmitter, IntrinEmitter, LLVMCallEmitter, PackedEmitter,
                      ParallelEmitter):
    def __init__(self, ctx: ModuleContext, fn: ir.Function, name: str):
        self.ctx, self.fn, self.name = ctx, fn, name
        self.vars = {}
        self.error_frees = []  # frees of the workspaces live here (lower_workspace.py)
        self.entry = fn.append_basic_block("entry")
        self.entry_builder = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(fn.append_basic_block("body"))
        location = ctx.debug_location(fn, name if fn.name.startswith("__tvm_ffi_") else fn.name)
        self.entry_builder.debug_metadata = self.b.debug_metadata = location

    # ---- helpers ---------------------------------------------------------------------------
    def entry_alloca(self, ty: ir.Type, align: int) -> ir.AllocaInstr:
        slot = self.entry_builder.alloca(ty)
        slot.align = align
        return opaque(slot)

    @contextmanager
    def bound(self, var, value):
        old = self.vars.get(id(var))
        self.vars[id(var)] = value
        try:
            yield
        finally:
            if old is None:
                del self.vars[id(var)]
            else:
                self.vars[id(var)] = old

    def finish(self) -> None:
        """Closes the function: the entry block falls into the body; an open end returns 0."""
        self.entry_builder.branch(self.fn.blocks[1])
        if not self.b.block.is_terminated:
            self.b.ret(ir.Constant(I32, 0))

    def loop(self, begin, end, body, signed=True, unroll=True) -> None:
        """`for (i = begin; i < end; ++i) body(i)` with `i` a phi; `unroll=False` tells LLVM
        not to unroll it (loop metadata on the back edge)."""
        pre = self.b.block
        header = self.fn.append_basic_block("for_begin")
        block = self.fn.append_basic_block("for_body")
        exit_block = self.fn.append_basic_block("for_end")
        self.b.branch(header)
        self.b.position_at_end(header)
        i = self.b.phi(begin.type)
        i.add_incoming(begin, pre)
        cmp = self.b.icmp_signed if signed else self.b.icmp_unsigned
        self.b.cbranch(cmp("<", i, end), block, exit_block)
        self.b.position_at_end(block)
        body(i)
        if not self.b.block.is_terminated:
            nxt = self.b.add(i, ir.Constant(i.type, 1), flags=("nsw",) if signed else ())
            i.add_incoming(nxt, self.b.block)
            back = self.b.branch(header)
            if not unroll:
                back.set_metadata("llvm.loop", self.ctx.loop_unroll_disable())
        self.b.position_at_end(exit_block)

    # ---- statements ------------------------------------------------------------------------
    def stmt(self, s) -> None:
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise InternalError(f"llvm codegen: no rule for statement {type(s).__name__}")
        method(s)

    def stmt_SeqStmt(self, s):
        for child in s.seq:
            self.stmt(child)

    def stmt_LetStmt(self, s):
        """A chain of lets and asserts, walked in a loop (a packed function's argument checks
        nest hundreds deep); the lets' bindings end with the chain."""
        saved = []
        try:
            while isinstance(s, (kir.LetStmt, kir.AssertStmt)):
                if isinstance(s, kir.AssertStmt):
                    self.assert_head(s)
                else:
                    if self.ctx.noalias and _distinct_memory(s.value):
                        self.ctx.mark_distinct(s.var)
                    value = self.expr(s.value)
                    saved.append((id(s.var), self.vars.get(id(s.var))))
                    self.vars[id(s.var)] = value
                s = s.body
            self.stmt(s)
        finally:
            for key, old in reversed(saved):
                if old is None:
                    del self.vars[key]
                else:
                    self.vars[key] = old

    stmt_AssertStmt = stmt_LetStmt

    def stmt_AttrStmt(self, s):
        if s.key == PARALLEL_LAUNCH:
            self.parallel_launch(s)
            return
        if s.key == UNROLL_DISABLE and isinstance(s.body, kir.For):
            self.stmt_For(s.body, unroll=False)
            return
        if s.key == NO_STRENGTH_REDUCE:
            self.ctx.strength_reduce = False
        if s.key != FREE_ON_ERROR:
            self.stmt(s.body)
            return
        self.error_frees.append(s.value)
        try:
            self.stmt(s.body)
        finally:
            self.error_frees.pop()

    def error_return(self, status) -> None:
        """Returns `status` (an error) from the function: first frees the workspaces live here,
        innermost first."""
        for free in reversed(self.error_frees):
            self.expr(free)
        self.b.ret(status)

    def stmt_Evaluate(self, s):
        if isinstance(s.value, kir.Call) and s.value.op == "tir.throw_last_error":
            # The runtime service that failed recorded the error (lower_workspace.py).
            self.error_return(ir.Constant(I32, -1))
            self.b.position_at_end(self.fn.append_basic_block("after_throw"))
            return
        if not isinstance(s.value, (kir.IntImm, kir.FloatImm)):
            self.expr(s.value)

    def stmt_BufferStore(self, s):
        self.store(s)

    def stmt_Return(self, s):
        value = self.expr(s.value)
        if value.type != I32:
            value = self._fit(value, True, DType(0, 32))
        self.b.ret(value)
        self.b.position_at_end(self.fn.append_basic_block("after_return"))

    def assert_head(self, s):
        """Branches to raising the assert's error when its condition is false."""
        ok = self.fn.append_basic_block("assert_ok")
        fail = self.fn.append_basic_block("assert_fail")
        self.b.cbranch(self.expr(s.condition), ok, fail)
        self.b.position_at_end(fail)
        if s.message:
            self.raise_error(s.kind, s.message)
        else:  # the condition recorded the error (tir.check_tensor_arg)
            self.error_return(ir.Constant(I32, -1))
        self.b.position_at_end(ok)

    def stmt_IfThenElse(self, s):
        cond = self.expr(s.condition)
        if s.else_case is None:
            with self.b.if_then(cond):
                self.stmt(s.then_case)
            return
        with self.b.if_else(cond) as (then, otherwise):
            with then:
                self.stmt(s.then_case)
            with otherwise:
                self.stmt(s.else_case)

    def stmt_While(self, s):
        head = self.fn.append_basic_block("while_cond")
        body = self.fn.append_basic_block("while_body")
        done = self.fn.append_basic_block("while_end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(s.condition), body, done)
        self.b.position_at_end(body)
        self.stmt(s.body)
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

    def stmt_For(self, s, unroll=True):
        if s.kind == kir.ForKind.PARALLEL:
            raise InternalError(f"llvm codegen: parallel loop {s.loop_var.name} reached the "
                                "codegen; run lower_parallel first")
        if s.kind == kir.ForKind.THREAD_BINDING:
            raise InternalError(f"llvm codegen: thread-bound loop {s.loop_var.name} in host code")
        lo, extent = self.expr(s.min), self.expr(s.extent)
        signed = not s.loop_var.dtype.is_uint

        def body(i):
            with self.bound(s.loop_var, self.b.add(lo, i, flags=("nsw",) if signed else ())):
                self.stmt(s.body)

        self.loop(ir.Constant(extent.type, 0), extent, body, signed, unroll)

    def stmt_Allocate(self, s):
        """A stack slot in the entry block; lower_workspace turned every other Allocate into
        workspace calls."""
        buf = s.buffer
        elem = memory_type(buf.dtype)
        nbytes = buf.dtype.bytes
        if not all(isinstance(d, kir.IntImm) for d in buf.shape):
            raise InternalError(f"llvm codegen: Allocate of {buf.name} has a symbolic size; "
                                "lower_workspace must run first")
        count = reduce(lambda a, d: a * d.value, buf.shape, 1)
        if count * nbytes > MAX_STACK_BYTES:
            raise InternalError(f"llvm codegen: Allocate of {buf.name} takes {count * nbytes} "
                                f"bytes (> {MAX_STACK_BYTES}); lower_workspace must run first")
        self.ctx.mark_distinct(buf.data)
        slot = self.entry_alloca(ir.ArrayType(elem, max(count, 1)),
                                 align=min(max(buf.data_alignment, nbytes), 64))
        with self.bound(buf.data, slot):
            self.stmt(s.body)


def emit_packed_function(ctx: ModuleContext, func, symbol: str) -> ir.Function:
    """Defines `__tvm_ffi_<symbol>` from `func` (packed form)."""
    params = func.params
    kinds = [p.dtype for p in params]
    if len(params) != 4 or not (kinds[0].is_handle and kinds[1].is_handle and kinds[3].is_handle):
        raise InternalError(f"llvm codegen: function {symbol} is not in packed form (params "
                            f"{[str(k) for k in kinds]}); run make_packed_api first")
    fn = ir.Function(ctx.module, SAFE_CALL, "__tvm_ffi_" + symbol)
    fn.attributes.add("nounwind")
    for arg, p in zip(fn.args, params):
        arg.name = p.name
    ctx.noalias = bool(func.attrs.get("tir.noalias", True)) and \
        PassContext.current().get("tir.noalias", True)
    emitter = FunctionEmitter(ctx, fn, symbol)
    for arg, p in zip(fn.args, params):
        emitter.vars[id(p)] = arg
    emitter.stmt(func.body)
    emitter.finish()
    return fn



def _distinct_memory(value) -> bool:
    """Whether a handle bound to `value` is a tensor argument's data or a fresh workspace."""
    if not isinstance(value, kir.Call):
        return False
    if value.op == "tir.alloc_workspace":
        return True
    return value.op == "tir.dltensor_get" and getattr(value.args[1], "value", None) == "data"
