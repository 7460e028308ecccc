"""Visitors and mutators over graph-level expressions, with TVM's method names.

`ExprVisitor.visit_expr(e)` dispatches to `visit_<kind>_` (visit_call_, visit_var_,
visit_tuple_, visit_function_, ...); bindings go through `visit_binding` (visit_var_binding_,
visit_match_cast_), blocks through `visit_binding_block` (visit_binding_block_,
visit_dataflow_block_) and variable definitions through `visit_var_def`. Each default visits
the children.

`ExprMutator` rebuilds a node only when a child changed, so an untouched subtree is the same
object. When a binding's value changes its struct info, the bound variable is replaced by a new
one (same name and kind) with the new struct info, and later uses are renamed to it
(`var_remap`). `emit(value)` inside a binding's visit adds a binding before it (a rewrite that
needs several operations); `lookup_binding(var)` gives the value a variable was bound to.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ..ir.structural_equal import structural_equal
from . import expr as X

_KINDS = {
    X.DataflowVar: "dataflow_var_", X.Var: "var_", X.Constant: "constant_",
    X.Tuple: "tuple_", X.TupleGetItem: "tuple_getitem_", X.Call: "call_", X.If: "if_",
    X.SeqExpr: "seq_expr_", X.Function: "function_", X.GlobalVar: "global_var_",
    X.ExternFunc: "extern_func_", X.Op: "op_", X.ShapeExpr: "shape_expr_",
    X.PrimValue: "prim_value_", X.StringImm: "string_imm_", X.DataTypeImm: "data_type_imm_",
}


def _kind(e: Any) -> str:
    for cls in type(e).__mro__:
        k = _KINDS.get(cls)
        if k is not None:
            return k
    raise TypeError(f"not a graph-level expression: {e!r}")


class ExprVisitor:
    """Read-only traversal."""

    def visit_expr(self, e: X.Expr) -> None:
        getattr(self, "visit_" + _kind(e))(e)

    # leaves
    def visit_var_(self, v: X.Var) -> None:
        pass

    def visit_dataflow_var_(self, v: X.DataflowVar) -> None:
        self.visit_var_(v)

    def visit_constant_(self, e) -> None:
        pass

    def visit_global_var_(self, e) -> None:
        pass

    def visit_extern_func_(self, e) -> None:
        pass

    def visit_op_(self, e) -> None:
        pass

    def visit_shape_expr_(self, e) -> None:
        pass

    def visit_prim_value_(self, e) -> None:
        pass

    def visit_string_imm_(self, e) -> None:
        pass

    def visit_data_type_imm_(self, e) -> None:
        pass

    # compound
    def visit_tuple_(self, e: X.Tuple) -> None:
        for f in e.fields:
            self.visit_expr(f)

    def visit_tuple_getitem_(self, e: X.TupleGetItem) -> None:
        self.visit_expr(e.tuple_value)

    def visit_call_(self, e: X.Call) -> None:
        self.visit_expr(e.op)
        for a in e.args:
            self.visit_expr(a)

    def visit_if_(self, e: X.If) -> None:
        self.visit_expr(e.cond)
        self.visit_expr(e.true_branch)
        self.visit_expr(e.false_branch)

    def visit_seq_expr_(self, e: X.SeqExpr) -> None:
        for b in e.blocks:
            self.visit_binding_block(b)
        self.visit_expr(e.body)

    def visit_function_(self, f: X.Function) -> None:
        for p in f.params:
            self.visit_var_def(p)
        self.visit_expr(f.body)

    # bindings
    def visit_binding_block(self, block: X.BindingBlock) -> None:
        if isinstance(block, X.DataflowBlock):
            self.visit_dataflow_block_(block)
        else:
            self.visit_binding_block_(block)

    def visit_binding_block_(self, block: X.BindingBlock) -> None:
        for b in block.bindings:
            self.visit_binding(b)

    def visit_dataflow_block_(self, block: X.DataflowBlock) -> None:
        self.visit_binding_block_(block)

    def visit_binding(self, b: X.Binding) -> None:
        if isinstance(b, X.MatchCast):
            self.visit_match_cast_(b)
        else:
            self.visit_var_binding_(b)

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        self.visit_expr(b.value)
        self.visit_var_def(b.var)

    def visit_match_cast_(self, b: X.MatchCast) -> None:
        self.visit_expr(b.value)
        self.visit_var_def(b.var)

    def visit_var_def(self, v: X.Var) -> None:
        pass


class ExprMutator:
    """Rewriting traversal; each `visit_<kind>_` returns the new expression."""

    def __init__(self) -> None:
        self.var_remap: Dict[int, X.Var] = {}
        self._bindings: Dict[int, X.Expr] = {}
        self._pending: Optional[List[X.Binding]] = None
        self._dataflow = False

    def visit_expr(self, e: X.Expr) -> X.Expr:
        return getattr(self, "visit_" + _kind(e))(e)

    # ---- leaves ------------------------------------------------------------------------------
    def visit_var_(self, v: X.Var) -> X.Expr:
        return self.var_remap.get(id(v), v)

    def visit_dataflow_var_(self, v: X.DataflowVar) -> X.Expr:
        return self.visit_var_(v)

    def _leaf(self, e):
        return e

    visit_constant_ = visit_global_var_ = visit_extern_func_ = visit_op_ = _leaf
    visit_shape_expr_ = visit_prim_value_ = visit_string_imm_ = visit_data_type_imm_ = _leaf

    # ---- compound ----------------------------------------------------------------------------
    def visit_tuple_(self, e: X.Tuple) -> X.Expr:
        fields = tuple(self.visit_expr(f) for f in e.fields)
        return e if _same(fields, e.fields) else X.Tuple(fields)

    def visit_tuple_getitem_(self, e: X.TupleGetItem) -> X.Expr:
        t = self.visit_expr(e.tuple_value)
        return e if t is e.tuple_value else X.TupleGetItem(t, e.index)

    def visit_call_(self, e: X.Call) -> X.Expr:
        op = self.visit_expr(e.op)
        args = tuple(self.visit_expr(a) for a in e.args)
        if op is e.op and _same(args, e.args):
            return e
        return X.Call(op, args, e.attrs, e.sinfo_args)

    def visit_if_(self, e: X.If) -> X.Expr:
        cond = self.visit_expr(e.cond)
        tb, fb = self.visit_expr(e.true_branch), self.visit_expr(e.false_branch)
        if cond is e.cond and tb is e.true_branch and fb is e.false_branch:
            return e
        return X.If(cond, tb, fb)

    def visit_seq_expr_(self, e: X.SeqExpr) -> X.Expr:
        blocks = [self.visit_binding_block(b) for b in e.blocks]
        blocks = [b for b in blocks if b.bindings]
        body = self.visit_expr(e.body)
        if body is e.body and _same(blocks, e.blocks):
            return e
        return X.SeqExpr(tuple(blocks), body)

    def visit_function_(self, f: X.Function) -> X.Expr:
        params = tuple(self.visit_var_def(p) for p in f.params)
        body = self.visit_expr(f.body)
        if body is f.body and _same(params, f.params):
            return f
        ret = f.ret_struct_info
        if not structural_equal(f.body.struct_info, body.struct_info):
            ret = None
        return X.Function(params, body, ret, f.is_pure, f.attrs)

    # ---- bindings ----------------------------------------------------------------------------
    def visit_binding_block(self, block: X.BindingBlock) -> X.BindingBlock:
        saved = self._pending, self._dataflow
        self._pending, self._dataflow = [], isinstance(block, X.DataflowBlock)
        try:
            for b in block.bindings:
                self.visit_binding(b)
            new = self._pending
        finally:
            self._pending, self._dataflow = saved
        if _same(new, block.bindings):
            return block
        return type(block)(tuple(new))

    def visit_binding(self, b: X.Binding) -> None:
        """Appends the rewritten binding(s) of `b` to the block being rebuilt."""
        if isinstance(b, X.MatchCast):
            self.visit_match_cast_(b)
        else:
            self.visit_var_binding_(b)

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        self.append_rebound(b, self.visit_expr(b.value))

    def append_rebound(self, b: X.VarBinding, value: X.Expr) -> None:
        """Appends `b`, or when `value` is not its value a binding of `value` to `b`'s variable
        (redefined if its struct info changed)."""
        if value is b.value:
            self._append(b)
        else:
            self._append(X.VarBinding(self._redefine(b.var, value.struct_info), value))

    def visit_match_cast_(self, b: X.MatchCast) -> None:
        value = self.visit_expr(b.value)
        self._append(b if value is b.value else X.MatchCast(b.var, value, b.struct_info))

    def visit_var_def(self, v: X.Var) -> X.Var:
        return v

    def _redefine(self, var: X.Var, sinfo) -> X.Var:
        if structural_equal(var.struct_info, sinfo):
            return var
        new = type(var)(var.name_hint, sinfo)
        self.var_remap[id(var)] = new
        return new

    def _append(self, b: X.Binding) -> None:
        if self._pending is None:
            raise RuntimeError("bindings are visited inside visit_binding_block")
        self._bindings[id(b.var)] = b.value
        self._pending.append(b)

    # ---- helpers for rewrites ----------------------------------------------------------------
    def emit(self, value: X.Expr, name_hint: str = "lv") -> X.Var:
        """Binds `value` in the block being rebuilt, before the binding being visited."""
        cls = X.DataflowVar if self._dataflow else X.Var
        var = cls(name_hint, value.struct_info)
        self._append(X.VarBinding(var, value))
        return var

    def lookup_binding(self, var: X.Var) -> Optional[X.Expr]:
        """The (rewritten) value `var` was bound to in what was visited so far."""
        return self._bindings.get(id(var))


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def post_order_visit(expr: X.Expr, fn: Callable[[X.Expr], None]) -> None:
    """Calls `fn` on every expression under `expr`, children first."""

    class _Visitor(ExprVisitor):
        def visit_expr(self, e):
            super().visit_expr(e)
            fn(e)

    _Visitor().visit_expr(expr)
