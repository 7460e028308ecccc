"""`verify(mod)`: the graph-level module is well formed, the check the graph pipeline's runner
makes (after every pass with COMPILER_VERIFY=1, else once on the result):
- every variable is bound once and used only where it is in scope (a function's parameters,
  the bindings before the use in its sequence and in enclosing ones; an If branch sees the
  scope it is in, and what it binds is its own);
- every GlobalVar used names a function of the module.
A violation raises InternalError naming the function and the variable: a pass broke the IR.
"""
from __future__ import annotations

from typing import Set

from ..ir.errors import InternalError
from ..ir.module import IRModule
from . import expr as X

_LEAVES = (X.Constant, X.ShapeExpr, X.PrimValue, X.StringImm, X.DataTypeImm, X.Op, X.ExternFunc)


class _Checker:
    def __init__(self, mod: IRModule, func_name: str):
        self.mod = mod
        self.func_name = func_name
        self.bound: Set[int] = set()

    def fail(self, what: str) -> InternalError:
        return InternalError(f"graph-level IR is not well formed: in '{self.func_name}', {what}")

    def define(self, v: X.Var, scope: Set[int]) -> None:
        if id(v) in self.bound:
            raise self.fail(f"variable {v.name_hint!r} is bound twice")
        self.bound.add(id(v))
        scope.add(id(v))

    def expr(self, e: X.Expr, scope: Set[int]) -> None:
        if isinstance(e, X.Var):
            if id(e) not in scope:
                raise self.fail(f"variable {e.name_hint!r} is used where it is not bound")
        elif isinstance(e, X.GlobalVar):
            if e.name_hint not in self.mod:
                raise self.fail(f"GlobalVar {e.name_hint!r} names no function of the module")
        elif isinstance(e, X.Call):
            self.expr(e.op, scope)
            for a in e.args:
                self.expr(a, scope)
        elif isinstance(e, X.Tuple):
            for f in e.fields:
                self.expr(f, scope)
        elif isinstance(e, X.TupleGetItem):
            self.expr(e.tuple_value, scope)
        elif isinstance(e, X.If):
            self.expr(e.cond, scope)
            self.seq(e.true_branch, set(scope))
            self.seq(e.false_branch, set(scope))
        elif isinstance(e, X.SeqExpr):
            self.seq(e, set(scope))
        elif isinstance(e, X.Function):
            self.function(e, set(scope))
        elif not isinstance(e, _LEAVES):
            raise self.fail(f"unknown expression {type(e).__name__}")

    def seq(self, seq: X.SeqExpr, scope: Set[int]) -> None:
        for block in seq.blocks:
            for b in block.bindings:
                self.expr(b.value, scope)
                self.define(b.var, scope)
        self.expr(seq.body, scope)

    def function(self, func: X.Function, scope: Set[int]) -> None:
        for p in func.params:
            self.define(p, scope)
        self.expr(func.body, scope)


def verify(mod: IRModule) -> None:
    """Raises InternalError when a graph-level function of `mod` is not well formed."""
    for name, func in mod.items():
        if isinstance(func, X.Function):
            _Checker(mod, name).function(func, set())


__all__ = ["verify"]
