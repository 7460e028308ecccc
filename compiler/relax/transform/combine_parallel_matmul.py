"""combine_parallel_matmul: matmuls of one value by several constant weights become one matmul
by the weights side by side, each result a slice of its columns (a transformer's query, key
and value projections: one GEMM of N = 3 * d instead of three of d).

before: `transpose_dense_weight` (dense layers with constant weights are matmuls by [K, N]).
after:  in each binding block, the bindings `v_i = matmul(x, W_i)` of one var `x` by 2-d
        Constants W_i [K, N_i] of one dtype (and out_dtype), each W_i read nowhere else, at
        least two of them, are `c = matmul(x, concat(W_1, ..., W_n, axis=1))` bound where the
        first of them was, and `v_i = strided_slice(c, last axis, [o_i, o_i + N_i))`. What
        read v_i (a bias add, a scale, a reshape into heads) reads the slice; the fusion pass
        puts each slice into the kernel that consumes it. One weight reader less per matmul
        combined: one kernel's code, one pass over x, and a GEMM wide enough for two threads.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator, post_order_visit
from ..struct_info import TensorStructInfo
from .graph_functions import map_graph_functions


def _reads(func: X.Function) -> Dict[int, int]:
    """{id(constant): how many call arguments read it} in `func`."""
    count: Dict[int, int] = {}

    def fn(e):
        if isinstance(e, X.Call):
            for a in e.args:
                for c in (a.fields if isinstance(a, X.Tuple) else (a,)):
                    if isinstance(c, X.Constant):
                        count[id(c)] = count.get(id(c), 0) + 1
    post_order_visit(func, fn)
    return count


def _member_key(b: X.Binding, reads: Dict[int, int]):
    """The group a binding of `matmul(x, W)` joins (x's identity, W's rows and dtype, the
    out_dtype), or None when it joins none."""
    if not isinstance(b, X.VarBinding):
        return None
    v = b.value
    if not (X.is_op_call(v, "relax.matmul") and len(v.args) == 2):
        return None
    x, w = v.args
    if not (isinstance(x, X.Var) and isinstance(w, X.Constant) and w.data.ndim == 2
            and reads.get(id(w)) == 1 and isinstance(b.var.struct_info, TensorStructInfo)
            and b.var.struct_info.ndim >= 1):
        return None
    return (id(x), w.data.shape[0], str(w.data.dtype), str(v.attrs.out_dtype))


def _groups(func: X.Function) -> Dict[int, Tuple[int, List[X.VarBinding]]]:
    """{id(member binding): (group number, the group's bindings in order)} for the groups of
    two or more matmuls in one binding block."""
    reads = _reads(func)
    out: Dict[int, Tuple[int, List[X.VarBinding]]] = {}
    number = 0
    for block in func.body.blocks:
        found: Dict[tuple, List[X.VarBinding]] = {}
        for b in block.bindings:
            key = _member_key(b, reads)
            if key is not None:
                found.setdefault(key, []).append(b)
        for members in found.values():
            if len(members) >= 2:
                for b in members:
                    out[id(b)] = (number, members)
                number += 1
    return out


class _Combine(ExprMutator):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups
        self.combined: Dict[int, X.Var] = {}     # group number -> the combined matmul's var

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        found = self.groups.get(id(b))
        if found is None:
            super().visit_var_binding_(b)
            return
        number, members = found
        combined = self.combined.get(number)
        if combined is None:
            first = members[0].value
            weight = X.Constant(np.ascontiguousarray(
                np.concatenate([m.value.args[1].data for m in members], axis=1)))
            out_dtype = first.attrs.out_dtype
            combined = self.emit(R.matmul(self.visit_expr(first.args[0]), weight,
                                          None if out_dtype in ("void", "", None)
                                          else out_dtype), "combined_matmul")
            self.combined[number] = combined
        start = 0
        for m in members:
            if m is b:
                break
            start += m.value.args[1].data.shape[1]
        width = b.value.args[1].data.shape[1]
        axis = b.var.struct_info.ndim - 1
        self.append_rebound(b, R.strided_slice(combined, [axis], [start], [start + width]))


def _combine(func: X.Function) -> X.Function:
    groups = _groups(func)
    return _Combine(groups).visit_expr(func) if groups else func


def combine_parallel_matmul(mod: IRModule) -> IRModule:
    """`mod` with the matmuls of one value by single-use constant weights combined."""
    return map_graph_functions(mod, _combine)
