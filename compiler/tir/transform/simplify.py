"""simplify: arithmetic simplification of every expression (compiler.arith's rewrite tables).

Before: any loop IR. After: the same program with constants folded and index arithmetic in
canonical form; statements and loops are kept (remove_no_op drops the dead ones).
"""
from __future__ import annotations

from ...arith import simplify as _simplify
from ...ir.module import IRModule
from ..function import PrimFunc
from .common import map_funcs


def _simplify_func(f: PrimFunc) -> PrimFunc:
    body = _simplify(f.body)
    return f if body is f.body else f.with_body(body)


def simplify(mod: IRModule) -> IRModule:
    return map_funcs(mod, _simplify_func)
