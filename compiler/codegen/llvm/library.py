"""Library-level symbols of an LLVM-built object: the weak `__tvm_ffi__library_ctx`, the weak
`__tvm_ffi_main` forwarder, and in system-lib mode this object's (internal) registration, the
constructor (in `llvm.global_ctors`) that calls it, and the weak entry
`kiln_system_lib_<prefix>register` that calls it too. Objects of several system-lib builds
with one prefix link into one library: each constructor registers its own object's functions,
and the entry is defined once.
"""
from __future__ import annotations

from typing import List, Optional

from llvmlite import ir

from .. import system_lib_entry_symbol
from .types import I8, I32, LIBRARY_CTX, PTR, SAFE_CALL, VOID, ModuleContext, global_variable


def emit_library(ctx: ModuleContext, symbols: List[str], entry: Optional[str],
                 prefix: Optional[str]) -> None:
    """Defines the library-wide symbols for functions `__tvm_ffi_<symbol>` in `ctx.module`.
    `entry` is the symbol `__tvm_ffi_main` forwards to; `prefix` is None outside system-lib mode.
    """
    lib_ctx = ctx.library_ctx()
    lib_ctx.initializer = ir.Constant(PTR, None)
    lib_ctx.align = 8
    lib_ctx.linkage = "weak"  # objects of several builds link into one library (one context)
    if entry is not None:
        _emit_main(ctx, entry)
    if prefix is not None:
        register = _emit_register(ctx, symbols, prefix)
        _emit_constructor(ctx, register)
        _emit_entry(ctx, register, prefix)


def _emit_main(ctx: ModuleContext, entry: str) -> None:
    target = ctx.declare("__tvm_ffi_" + entry, SAFE_CALL.return_type, SAFE_CALL.args)
    main = ir.Function(ctx.module, SAFE_CALL, "__tvm_ffi_main")
    main.linkage = "weak"
    main.attributes.add("nounwind")
    b = ir.IRBuilder(main.append_basic_block("entry"))
    b.ret(b.call(target, list(main.args), tail=True))


def _emit_register(ctx: ModuleContext, symbols: List[str], prefix: str) -> ir.Function:
    """`internal int32 __kiln_register_objects(void)`: registers every function and the library
    context with TVMFFIEnvModRegisterSystemLibSymbol, once; returns the first failure's status."""
    done = global_variable(ctx.module, I8, ctx.unique("__kiln_registered"))
    done.linkage = "internal"
    done.initializer = ir.Constant(I8, 0)
    fn = ir.Function(ctx.module, ir.FunctionType(I32, []), ctx.unique("__kiln_register_objects"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    already = b.icmp_unsigned("!=", b.load(done, typ=I8), ir.Constant(I8, 0))
    with b.if_then(already, likely=False):
        b.ret(ir.Constant(I32, 0))
    b.store(ir.Constant(I8, 1), done)
    register_fn = ctx.declare("TVMFFIEnvModRegisterSystemLibSymbol")
    entries = [(prefix + LIBRARY_CTX, ctx.library_ctx())]
    entries += [("__tvm_ffi_" + s, ctx.declare("__tvm_ffi_" + s, SAFE_CALL.return_type,
                                               SAFE_CALL.args)) for s in symbols]
    status = ir.Constant(I32, 0)
    for name, value in entries:
        rc = b.call(register_fn, [ctx.cstring(name), value])
        status = b.select(b.icmp_signed("==", status, ir.Constant(I32, 0)), rc, status)
    b.ret(status)
    return fn


def _emit_entry(ctx: ModuleContext, register: ir.Function, prefix: str) -> None:
    """The weak `int32 kiln_system_lib_<prefix>register(void)`, calling `register`."""
    entry = ir.Function(ctx.module, ir.FunctionType(I32, []), system_lib_entry_symbol(prefix))
    entry.linkage = "weak"
    entry.attributes.add("nounwind")
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    b.ret(b.call(register, []))


def _emit_constructor(ctx: ModuleContext, register: ir.Function) -> None:
    ctor = ir.Function(ctx.module, ir.FunctionType(VOID, []), "__tvm_module_startup")
    ctor.linkage = "internal"
    b = ir.IRBuilder(ctor.append_basic_block("entry"))
    b.call(register, [])
    b.ret_void()
    entry_type = ir.LiteralStructType([I32, PTR, PTR])
    ctors = global_variable(ctx.module, ir.ArrayType(entry_type, 1), "llvm.global_ctors")
    ctors.linkage = "appending"
    ctors.initializer = ir.Constant(ir.ArrayType(entry_type, 1), [
        ir.Constant(entry_type, [ir.Constant(I32, 65535), ctor, ir.Constant(PTR, None)])])
