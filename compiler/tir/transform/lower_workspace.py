"""lower_workspace: decide where each temporary buffer lives on the host.

Before: packed-form PrimFuncs (make_packed_api ran; attr "tir.device_id" names the device-id
Var or is None) whose bodies may hold `Allocate` nodes.
After: an `Allocate` whose size is a constant of at most 1024 bytes (MAX_STACK_BYTES, TVM's
kMaxStackAlloca) stays an `Allocate` (codegens put it on the stack); every other one becomes

    LetStmt(buf.data, tir.alloc_workspace(device_type, dev_id, nbytes, code, bits))
      IfThenElse(tir.handle_is_null(buf.data), Evaluate(tir.throw_last_error()))
      AttrStmt(buf.data, "tir.free_on_error", tir.free_workspace(device_type, dev_id, buf.data))
        body
      IfThenElse(tir.free_workspace(device_type, dev_id, buf.data) != 0,
                 Evaluate(tir.throw_last_error()))

as TVM's LowerTVMBuiltin does. In the host function of a GPU build (attr "tir.device_type" not
CPU) every `Allocate` becomes a workspace on that device, whatever its size: its kernels read
it. A runtime that returns NULL from TVMBackendAllocWorkspace or a
non-zero status from TVMBackendFreeWorkspace has already raised the error with its reason
("too many live workspaces on this thread", "workspace freed out of order (not LIFO)", out of
memory), so the kernel returns -1 without overwriting it (`tir.throw_last_error`).
Frees run in LIFO order (nested allocations free innermost first), as TVMBackendAllocWorkspace
requires. FREE_ON_ERROR is the codegens' contract for error exits: a function that returns an
error from inside such an AttrStmt (a failing AssertStmt, `tir.call_packed`, parallel launch or
`tir.throw_last_error`) first evaluates the `value` of every enclosing one, innermost first,
ignoring its status, so a failure leaves the thread's workspace pool as the call found it.
Functions that are not packed are left alone.
"""
from __future__ import annotations

from ...ir import IRModule
from ...ir.dtype import boolean, handle, int32, int64
from .. import (
    Add,
    Allocate,
    AttrStmt,
    Call,
    Cast,
    Evaluate,
    IfThenElse,
    IntImm,
    IRMutator,
    LetStmt,
    Mul,
    PrimExpr,
    PrimFunc,
    cast,
    const,
    seq,
)
from ..functor import post_order_visit
from .common import map_funcs

MAX_STACK_BYTES = 1024
FREE_ON_ERROR = "tir.free_on_error"


def lower_workspace(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerWorkspace(f).visit_func(f)
                     if f.attrs.get("calling_conv") == "packed" else f)


def _nbytes(alloc: Allocate) -> PrimExpr:
    size: PrimExpr = const(alloc.buffer.dtype.bytes, "int64")
    for extent in alloc.buffer.shape:
        size = size * cast(int64, extent)
    return size


def _const_nbytes(alloc: Allocate):
    total = alloc.buffer.dtype.bytes
    for extent in alloc.buffer.shape:
        if not isinstance(extent, IntImm):
            return None
        total *= extent.value
    return total


class _LowerWorkspace(IRMutator):
    def __init__(self, func: PrimFunc):
        target = func.attrs.get("target")
        # The host function of a GPU build allocates its intermediates on the device its
        # kernels run on ("tir.device_type" from split_host_device), never on the host stack.
        self.device_type = const(func.attrs.get("tir.device_type",
                                                getattr(target, "device_type", 1)))
        self.on_host = self.device_type.value == 1
        dev = func.attrs.get("tir.device_id")
        self.device_id = dev if dev is not None else const(0)

    def visit_Allocate(self, s: Allocate):
        s = self.generic_visit(s)
        nbytes = _const_nbytes(s)
        if self.on_host and nbytes is not None and nbytes <= MAX_STACK_BYTES:
            return s
        buf = s.buffer
        dtype = buf.dtype
        alloc = Call(handle, "tir.alloc_workspace",
                     (self.device_type, self.device_id, _nbytes(s), const(dtype.code),
                      const(dtype.bits)))
        free = Call(int32, "tir.free_workspace", (self.device_type, self.device_id, buf.data))
        is_null = Call(boolean, "tir.handle_is_null", (buf.data,))
        body = seq(IfThenElse(is_null, _throw_last_error()),
                   AttrStmt(buf.data, FREE_ON_ERROR, free, s.body),
                   IfThenElse(free != 0, _throw_last_error()))
        return LetStmt(buf.data, alloc, body)


def _throw_last_error() -> Evaluate:
    return Evaluate(Call(int32, "tir.throw_last_error", ()))


def _const_value(e):
    """The value of an integer expression of constants (products, sums, casts), else None."""
    if isinstance(e, IntImm):
        return int(e.value)
    if isinstance(e, Cast):
        return _const_value(e.value)
    if isinstance(e, (Mul, Add)):
        a, b = _const_value(e.a), _const_value(e.b)
        if a is None or b is None:
            return None
        return a * b if isinstance(e, Mul) else a + b
    return None


WORKSPACE_ALIGNMENT = 64  # the runtime hands out workspace blocks at 64-byte boundaries


def workspace_bound(mod: IRModule):
    """The most CPU workspace (bytes) one call of any function of `mod` (after this pass) can
    hold at once: the sum of its `tir.alloc_workspace` sizes, each rounded up to 64 bytes (each
    allocation site is live at most once at a time: freed before its loop iterates, tasks of a
    parallel launch running one after another on a one-thread runtime). 0 without workspaces;
    None when a size is not a constant."""
    worst = 0
    for _, func in mod.items():
        if not isinstance(func, PrimFunc):
            continue
        sizes = []

        def visit(node, sizes=sizes):
            if isinstance(node, Call) and node.op == "tir.alloc_workspace":
                sizes.append(_const_value(node.args[2]))

        post_order_visit(func.body, visit)
        if any(n is None for n in sizes):
            return None
        total = sum(-(-n // WORKSPACE_ALIGNMENT) * WORKSPACE_ALIGNMENT for n in sizes)
        worst = max(worst, total)
    return worst
