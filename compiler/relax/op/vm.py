"""Operators of the VM lowering (the `relax.vm.*` / builtin names of TVM): what the VM passes
write into the graph level before bytecode is emitted.

    call_builtin_with_ctx(ExternFunc("vm.builtin.alloc_storage"), (args...))
        a runtime builtin called with the VM itself as its first argument
    kill_object(x)       x's register is released (written with null)
    null_value()         the None value (the void register)
    make_closure(f, (captures...))   a closure of lifted function `f` over captured values
    invoke_closure(c, (args...))     calls closure `c`

Calls of runtime builtins that need no VM state are calls of an ExternFunc
(`Call(ExternFunc("vm.builtin.make_shape"), args, sinfo_args=(ret,))`).
"""
from __future__ import annotations

from typing import Sequence

from ..expr import Call, Expr, ExternFunc, Tuple
from ..struct_info import ObjectStructInfo, StructInfo, TupleStructInfo
from .registry import make_call, register


def _sinfo_or_object(call: Call) -> StructInfo:
    return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()


def _void(call: Call) -> StructInfo:
    return TupleStructInfo(())


def _object(call: Call) -> StructInfo:
    return ObjectStructInfo()


register("relax.call_builtin_with_ctx", _sinfo_or_object, ("func", "args"), purity=False)
register("relax.vm.kill_object", _void, ("obj",), purity=False)
register("relax.null_value", _object, ())
register("relax.make_closure", _object, ("func", "args"))
register("relax.invoke_closure", _sinfo_or_object, ("closure", "args"), purity=False)

VOID = TupleStructInfo(())


def call_builtin_with_ctx(name: str, args: Sequence[Expr], sinfo: StructInfo = None) -> Call:
    return make_call("relax.call_builtin_with_ctx", (ExternFunc(name), Tuple(tuple(args))),
                     sinfo_args=(sinfo if sinfo is not None else ObjectStructInfo(),))


def call_builtin(name: str, args: Sequence[Expr], sinfo: StructInfo = None) -> Call:
    """A call of runtime builtin `name` (no VM state); `sinfo` its result (void when None)."""
    return Call(ExternFunc(name), tuple(args), None, (sinfo if sinfo is not None else VOID,))


def kill_object(x: Expr) -> Call:
    return make_call("relax.vm.kill_object", (x,))


def null_value() -> Call:
    return make_call("relax.null_value", ())


def make_closure(func: Expr, captures: Sequence[Expr]) -> Call:
    return make_call("relax.make_closure", (func, Tuple(tuple(captures))))


def invoke_closure(closure: Expr, args: Sequence[Expr], ret: StructInfo) -> Call:
    return make_call("relax.invoke_closure", (closure, Tuple(tuple(args))), sinfo_args=(ret,))
