"""fold_constant: operators whose arguments are all known are computed at compile time.

before: any graph-level module.
after:  no call of a pure operator has only constant arguments and a result of static shape
        (its value, computed by the reference interpreter, replaces it; a symbolic result
        shape means the call reads symbolic dims, a slice's bound say, known at run time); a
        variable bound to a constant is replaced by the constant at its uses and its binding
        dropped; `(a, b)[i]` is the field itself.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from ..functor import ExprMutator
from ..interpreter import evaluate
from ..struct_info import TensorStructInfo, TupleStructInfo
from .graph_functions import map_graph_functions

# Operators never folded: they call kernels, or their value is not a tensor of the graph.
_KEEP = {"relax.call_tir", "relax.call_dps_packed", "relax.shape_of"}


def _known(e: X.Expr) -> bool:
    """Whether `e`'s value is known now: constants, static shapes, immediates, tuples of them."""
    if isinstance(e, X.Tuple):
        return all(_known(f) for f in e.fields)
    if isinstance(e, X.ShapeExpr):
        return all(isinstance(d, int) for d in e.values)
    return isinstance(e, (X.Constant, X.PrimValue, X.StringImm, X.DataTypeImm))


def symbolic_result(e: X.Expr) -> bool:
    """Whether `e`'s struct info holds a symbolic dim (its value depends on run-time dims)."""
    s = e.struct_info
    parts = s.fields if isinstance(s, TupleStructInfo) else (s,)
    return any(isinstance(p, TensorStructInfo) and p.shape is not None and
               not all(isinstance(d, int) for d in p.shape) for p in parts)


def _as_expr(value) -> X.Expr:
    if isinstance(value, (tuple, list)):
        return X.Tuple(tuple(_as_expr(v) for v in value))
    return X.Constant(np.asarray(value))


class _Folder(ExprMutator):
    def __init__(self):
        super().__init__()
        self.known: Dict[int, X.Expr] = {}

    def visit_var_(self, v: X.Var) -> X.Expr:
        c = self.known.get(id(v))
        return c if c is not None else super().visit_var_(v)

    def visit_call_(self, e: X.Call) -> X.Expr:
        call = super().visit_call_(e)
        op = call.op
        if (isinstance(op, X.Op) and op.name not in _KEEP and op.get_attr("purity", True)
                and call.args and all(_known(a) for a in call.args)
                and not symbolic_result(call)):
            return _as_expr(evaluate(call))
        return call

    def visit_tuple_getitem_(self, e: X.TupleGetItem) -> X.Expr:
        new = super().visit_tuple_getitem_(e)
        if isinstance(new.tuple_value, X.Tuple):
            return new.tuple_value.fields[new.index]
        return new

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        if _known(value) and not isinstance(value, (X.ShapeExpr, X.PrimValue)):
            self.known[id(b.var)] = value
            return
        self.append_rebound(b, value)


def fold_constant(mod: IRModule) -> IRModule:
    """`mod` with every graph-level function's constant computations folded."""
    return map_graph_functions(mod, lambda f: _Folder().visit_expr(f))
