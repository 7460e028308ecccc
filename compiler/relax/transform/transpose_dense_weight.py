"""transpose_dense_weight: a dense layer with a constant weight becomes a matmul with the weight
transposed at compile time, so a kernel reads it along the output columns (contiguous vectors).

before: bound weights, constants folded (`bind_params`, `fold_constant`, `fold_batch_norm`:
        that pass looks for `nn.dense`, so it runs first).
after:  `nn.dense(x, W)` with W a 2-d Constant [N, K] and x 2-d is `matmul(x, W')` with
        W' = W.T [K, N] a new Constant (the same out_dtype). A weight used by several dense
        layers is transposed once. Dense layers with a weight computed at run time stay.
        Tied weights are stored once: a `matmul(x, B)` whose constant B is the transpose of
        another constant W of the function (a language model's output layer reading its
        token embedding table, which a Gather also reads) becomes `nn.dense(x, W)`, and a
        dense weight that something else also reads stays as it is (no transposed copy).

The weight is laid out at compile time the way the GEMM kernels read it: the x86 register
tile (topi.x86.gemm.tile_gemm, for static and symbolic row counts) loads vectors of W' rows
along N, where a dense weight [N, K] would be read with strided gathers. GPU schedules treat
dense and matmul alike. Runs in both pipelines: relay.build's `optimize` and the VM's
`default_pipeline`.
"""
from __future__ import annotations

import hashlib
from typing import Dict, List, Tuple

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator, post_order_visit
from ..struct_info import TensorStructInfo


def _key(a: np.ndarray) -> tuple:
    """The content of an array as a dict key: dtype, shape and a digest of its bytes."""
    return (str(a.dtype), a.shape, hashlib.sha1(np.ascontiguousarray(a).tobytes()).digest())


def constant_uses(func: X.Function) -> Dict[int, List[Tuple[str, int]]]:
    """{id(constant): [(operator name, argument position)]} of the function's calls."""
    uses: Dict[int, List[Tuple[str, int]]] = {}

    def visit(e, op_name, pos):
        if isinstance(e, X.Constant):
            uses.setdefault(id(e), []).append((op_name, pos))
        elif isinstance(e, X.Tuple):
            for f in e.fields:
                visit(f, op_name, pos)

    def fn(e):
        if isinstance(e, X.Call):
            name = e.op.name if isinstance(e.op, X.Op) else ""
            for k, a in enumerate(e.args):
                if not isinstance(a, X.Call):
                    visit(a, name, k)
    post_order_visit(func, fn)
    return uses


class _Transpose(ExprMutator):
    def __init__(self, func: X.Function):
        super().__init__()
        self.done: Dict[int, X.Constant] = {}
        self.uses = constant_uses(func)
        # 2-d constants read by something else than as a weight of nn.dense: their transposes
        # are matched by content against the right operands of matmuls
        self.shared: Dict[tuple, X.Constant] = {}
        self.matmul_rhs = set()
        constants: Dict[int, X.Constant] = {}

        def fn(e):
            if isinstance(e, X.Constant) and e.data.ndim == 2:
                constants[id(e)] = e
        post_order_visit(func, fn)
        for c in constants.values():
            for op_name, pos in self.uses.get(id(c), ()):
                if op_name == "relax.matmul" and pos == 1:
                    self.matmul_rhs.add(c.data.T.shape + (str(c.data.dtype),))
        for c in constants.values():
            if (c.data.shape + (str(c.data.dtype),)) in self.matmul_rhs and self.read_elsewhere(c):
                self.shared.setdefault(_key(c.data), c)

    def read_elsewhere(self, c: X.Constant) -> bool:
        """Whether something else than the weight operand of nn.dense reads `c`."""
        return any(use != ("relax.nn.dense", 1) for use in self.uses.get(id(c), ()))

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        new = self._rewrite(value)
        self.append_rebound(b, value if new is None else new)

    def _rewrite(self, e: X.Expr):
        if X.is_op_call(e, "relax.matmul") and len(e.args) == 2:
            return self._tied(e)
        if not (X.is_op_call(e, "relax.nn.dense") and len(e.args) == 2):
            return None
        x, w = e.args
        xs = x.struct_info
        if not (isinstance(w, X.Constant) and w.data.ndim == 2
                and isinstance(xs, TensorStructInfo) and xs.ndim == 2) or self.read_elsewhere(w):
            return None
        wt = self.done.get(id(w))
        if wt is None:
            wt = X.Constant(np.ascontiguousarray(w.data.T))
            self.done[id(w)] = wt
        out_dtype = e.attrs.out_dtype
        return R.matmul(x, wt, None if out_dtype in ("void", "", None) else out_dtype)


    def _tied(self, e: X.Call):
        """`nn.dense(x, W)` for `matmul(x, B)` when B is the transpose of a shared constant W
        (x of 2 dims, or of more with a static shape: flattened to rows around the dense)."""
        x, b = e.args
        xs = x.struct_info
        if not (self.shared and isinstance(b, X.Constant) and b.data.ndim == 2
                and isinstance(xs, TensorStructInfo) and xs.ndim >= 2 and xs.shape is not None
                and (xs.ndim == 2 or xs.is_static)):
            return None
        w = self.shared.get(_key(b.data.T))
        if w is None or not np.array_equal(w.data, b.data.T):
            return None
        out_dtype = e.attrs.out_dtype
        out_dtype = None if out_dtype in ("void", "", None) else out_dtype
        if xs.ndim == 2:
            return R.nn.dense(x, w, out_dtype)
        # the dense kernel takes rows: [..., K] as [rows, K] and back
        lead = tuple(int(d) for d in xs.shape[:-1])
        rows = self.emit(R.reshape(x, (int(np.prod(lead)), int(xs.shape[-1]))))
        out = self.emit(R.nn.dense(rows, w, out_dtype))
        return R.reshape(out, lead + (w.data.shape[0],))


def transpose_dense_weight(mod: IRModule) -> IRModule:
    """`mod` with constant dense weights transposed and those layers made matmuls."""
    functions = {}
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            func = _Transpose(func).visit_expr(func)
        functions[name] = func
    return mod.with_functions(functions)
