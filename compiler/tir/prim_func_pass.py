"""`prim_func_pass`, as TVM's `tvm.tir.transform.prim_func_pass`: a pass `fn(func, mod, ctx) ->
func` run on every PrimFunc of a module (a decorator too; on a class, its
`transform_function` method). Passes of this kind take part in PassContext's opt_level,
disabled_pass/required_pass and instruments like `compiler.transform.module_pass` ones."""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir.module import IRModule
from ..transform import ModulePass, PassContext, PassContextError, make_pass
from .function import PrimFunc


class PrimFuncPass(ModulePass):
    """`fn(func, mod, ctx) -> func` applied to every PrimFunc of a module (None drops it)."""

    def apply(self, mod: IRModule) -> IRModule:
        ctx = PassContext.current()
        out, changed = {}, False
        for name, func in mod.items():
            new = self.fn(func, mod, ctx) if isinstance(func, PrimFunc) else func
            if new is not None and not isinstance(new, PrimFunc):
                raise PassContextError(f"prim_func_pass {self.info.name!r} returned "
                                       f"{type(new).__name__} for '{name}', not a PrimFunc")
            changed |= new is not func
            if new is not None:
                out[name] = new
        return mod.with_functions(out) if changed else mod


def prim_func_pass(pass_func=None, opt_level: Optional[int] = None, name: Optional[str] = None,
                   required: Optional[Sequence[str]] = None):
    """A pass `pass_func(func, mod, ctx) -> func` run on every PrimFunc."""
    return make_pass(PrimFuncPass, "transform_function", pass_func, opt_level, name, required)


__all__ = ["PrimFuncPass", "prim_func_pass"]
