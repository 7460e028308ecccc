"""lambda_lift: local functions become module functions; calls of function values become
closure calls.

before: graph-level functions may bind local functions (`f = Function(...)`, possibly nested)
        and call variables of function type.
after:  no Function is nested in another. A local function `f` bound in `outer` is the module
        function `outer_f` (a suffix when the name is taken) whose parameters are the variables
        it captured from outer scopes, then its own; the binding is
        `f = make_closure(outer_f, (captured...))` when it captured something, and uses of `f`
        are `outer_f` itself when it captured nothing (so its calls are direct calls).
        Every call whose callee is a variable (a closure or a function value passed in) is
        `invoke_closure(callee, (args...))`.
"""
from __future__ import annotations

from typing import Dict, List, Set

from ...ir.module import IRModule
from .. import expr as X
from ..functor import ExprMutator, ExprVisitor
from ..op import vm as vm_op


class _Defs(ExprVisitor):
    """Variables defined (parameters, bindings) and used inside an expression."""

    def __init__(self):
        self.defined: Set[int] = set()
        self.used: List[X.Var] = []
        self._seen: Set[int] = set()

    def visit_var_def(self, v: X.Var) -> None:
        self.defined.add(id(v))

    def visit_var_(self, v: X.Var) -> None:
        if id(v) not in self._seen:
            self._seen.add(id(v))
            self.used.append(v)

    visit_dataflow_var_ = visit_var_


def free_vars(func: X.Function) -> List[X.Var]:
    """The variables `func` uses but does not define, in first-use order."""
    d = _Defs()
    d.visit_expr(func)
    return [v for v in d.used if id(v) not in d.defined]


class _Lifter(ExprMutator):
    def __init__(self, outer: str, names: Set[str], out: Dict[str, X.Function]):
        super().__init__()
        self.outer, self.names, self.out = outer, names, out
        self.direct: Dict[int, X.GlobalVar] = {}

    def _fresh(self, base: str) -> str:
        name, i = base, 0
        while name in self.names:
            i += 1
            name = f"{base}{i}"
        self.names.add(name)
        return name

    def visit_var_(self, v: X.Var) -> X.Expr:
        gv = self.direct.get(id(v))
        return gv if gv is not None else super().visit_var_(v)

    visit_dataflow_var_ = visit_var_

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        if not isinstance(b.value, X.Function):
            super().visit_var_binding_(b)
            return
        inner = self.visit_expr(b.value)   # nested local functions first
        captured = free_vars(inner)
        name = self._fresh(f"{self.outer}_{b.var.name_hint}")
        fresh = [X.Var(v.name_hint, v.struct_info) for v in captured]
        body = _Rename({id(v): n for v, n in zip(captured, fresh)}).visit_expr(inner.body)
        attrs = dict(inner.attrs)
        attrs["global_symbol"] = name
        lifted = X.Function(tuple(fresh) + inner.params, body, inner.ret_struct_info,
                            inner.is_pure, attrs)
        gv = X.GlobalVar(name)
        X.set_struct_info(gv, lifted.struct_info)
        self.out[name] = lifted
        if not captured:
            self.direct[id(b.var)] = gv
            return
        var = X.Var(b.var.name_hint, inner.struct_info)
        self.var_remap[id(b.var)] = var
        self._append(X.VarBinding(var, vm_op.make_closure(gv, captured)))

    def visit_call_(self, e: X.Call) -> X.Expr:
        call = super().visit_call_(e)
        if isinstance(call.op, X.Var):
            return vm_op.invoke_closure(call.op, call.args, e.struct_info)
        return call


class _Rename(ExprMutator):
    def __init__(self, remap: Dict[int, X.Var]):
        super().__init__()
        self.var_remap.update(remap)


def lambda_lift(mod: IRModule) -> IRModule:
    functions = dict(mod.functions)
    names = set(functions)
    pending = [n for n, f in mod.items() if isinstance(f, X.Function)]
    while pending:
        name = pending.pop()
        func = functions[name]
        if func.attrs.get("Primitive"):
            continue
        lifted: Dict[str, X.Function] = {}
        new = _Lifter(name, names, lifted).visit_expr(func)
        functions[name] = new
        functions.update(lifted)
        pending.extend(lifted)
    return mod.with_functions(functions)
