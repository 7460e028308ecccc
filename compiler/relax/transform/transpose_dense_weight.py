"""transpose_dense_weight: a dense layer with a constant weight becomes a matmul with the weight
transposed at compile time, so a kernel reads it along the output columns (contiguous vectors).

before: bound weights, constants folded (`bind_params`, `fold_constant`, `fold_batch_norm`:
        that pass looks for `nn.dense`, so it runs first).
after:  `nn.dense(x, W)` with W a 2-d Constant [N, K] and x 2-d is `matmul(x, W')` with
        W' = W.T [K, N] a new Constant (the same out_dtype). A weight used by several dense
        layers is transposed once. Dense layers with a weight computed at run time stay.

The weight is laid out at compile time the way the GEMM kernels read it: the x86 register
tile (topi.x86.gemm.tile_gemm, for static and symbolic row counts) loads vectors of W' rows
along N, where a dense weight [N, K] would be read with strided gathers. GPU schedules treat
dense and matmul alike. Runs in both pipelines: relay.build's `optimize` and the VM's
`default_pipeline`.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo


class _Transpose(ExprMutator):
    def __init__(self):
        super().__init__()
        self.done: Dict[int, X.Constant] = {}

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        new = self._rewrite(value)
        if new is None:
            if value is b.value:
                self._append(b)
            else:
                self._append(X.VarBinding(self._redefine(b.var, value.struct_info), value))
            return
        self._append(X.VarBinding(self._redefine(b.var, new.struct_info), new))

    def _rewrite(self, e: X.Expr):
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op)
                and e.op.name == "relax.nn.dense" and len(e.args) == 2):
            return None
        x, w = e.args
        xs = x.struct_info
        if not (isinstance(w, X.Constant) and w.data.ndim == 2
                and isinstance(xs, TensorStructInfo) and xs.ndim == 2):
            return None
        wt = self.done.get(id(w))
        if wt is None:
            wt = X.Constant(np.ascontiguousarray(w.data.T))
            self.done[id(w)] = wt
        out_dtype = e.attrs.out_dtype
        return R.matmul(x, wt, None if out_dtype in ("void", "", None) else out_dtype)


def transpose_dense_weight(mod: IRModule) -> IRModule:
    """`mod` with constant dense weights transposed and those layers made matmuls."""
    functions = {}
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            func = _Transpose().visit_expr(func)
        functions[name] = func
    return mod.with_functions(functions)
