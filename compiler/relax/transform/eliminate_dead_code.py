"""eliminate_dead_code: bindings whose variable is never used, and whose value is pure, go.

before: any graph-level module.
after:  every remaining binding of a function that is not a primitive kernel is used by a later
        binding or by the function's result (or has side effects).
"""
from __future__ import annotations

from typing import Dict, List

from ...ir.module import IRModule
from .. import expr as X
from ..functor import post_order_visit


def use_counts(func: X.Function) -> Dict[int, int]:
    """How many times each variable (by id) is used in `func`'s body, its result included."""
    counts: Dict[int, int] = {}

    def visit(e):
        if isinstance(e, X.Var):
            counts[id(e)] = counts.get(id(e), 0) + 1
    post_order_visit(func.body, visit)
    return counts


def _pure(value: X.Expr) -> bool:
    """Whether dropping `value` unevaluated changes nothing (calls of pure operators, kernels
    in destination-passing style, primitive functions, and every non-call)."""
    if not isinstance(value, X.Call):
        return True
    if isinstance(value.op, X.Op):
        return bool(value.op.get_attr("purity", True))
    return isinstance(value.op, X.GlobalVar)


def _prune(func: X.Function) -> X.Function:
    while True:
        counts = use_counts(func)
        body = func.body
        blocks: List[X.BindingBlock] = []
        removed = False
        for block in body.blocks:
            kept = []
            for b in block.bindings:
                if counts.get(id(b.var), 0) == 0 and _pure(b.value) and not isinstance(
                        b, X.MatchCast):
                    removed = True
                    continue
                kept.append(b)
            if kept:
                blocks.append(type(block)(tuple(kept)))
        if not removed:
            return func
        func = X.Function(func.params, X.SeqExpr(tuple(blocks), body.body),
                          func.ret_struct_info, func.is_pure, func.attrs)


def eliminate_dead_code(mod: IRModule) -> IRModule:
    functions = {}
    for name, func in mod.items():
        if isinstance(func, X.Function) and isinstance(func.body, X.SeqExpr):
            func = _prune(func)
        functions[name] = func
    return mod.with_functions(functions)
