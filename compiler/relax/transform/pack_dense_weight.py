"""pack_dense_weight: for a CPU target, the products that take the packed GEMM read a constant
weight already packed in the GEMM's column panels, instead of packing it at every call (as
TVM's AlterOpLayout turns x86 dense into contrib_dense_pack with a layout_transform of the
weight, which FoldConstant then computes).

before: `transpose_dense_weight` and `combine_parallel_matmul` ran (a dense layer by a constant
        is a matmul by W.T [K, N], unless its weight is tied to something else).
after:  `matmul(x, B)` with B a 2-d float32 Constant [K, N], and `nn.dense(x, W)` with W one
        [N, K], where the CPU strategy takes the packed GEMM (topi.x86.packed_matmul_applies:
        enough rows, static shapes) is `nn.contrib_dense_pack(x, P, units=N)`, P the weight
        in panels of the GEMM's register tile width nr: [ceil(N / nr), K, nr], the columns
        past N zero (topi.nn.dense_pack_weight).
        - A weight that nothing else reads becomes P, a constant computed now: the file holds
          it at its size (padded to whole panels), and it is never packed again.
        - A weight that something else reads too (a language model's output layer tied to its
          token embedding, which a Gather reads) stays; with `at_load` (the graph executor's
          builds) P is `nn.contrib_dense_pack_weight_transform(W, nr, layout)`, a call on a
          constant alone, which the graph executor runs once after its parameters are set, so
          the file keeps one copy; without it the product stays as it was (packed per call).

Measured at 1 thread, weights packed before against per call: GPT-2's tied output layer 32 x
128 x 1000 0.109 -> 0.073 ms, its MLP's 32 x 128 x 512 41 -> 37 us, ViT-B/16's MLP 197 x 768 x
3072 8.9 -> 8.3 ms. For a GPU target and for a bare-metal one nothing changes.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from ...ir.module import IRModule
from ...topi.nn.dense import dense_pack_weight_numpy
from ...topi.x86.gemm import packed_matmul_applies, register_tile
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator, post_order_visit
from ..struct_info import TensorStructInfo
from .convert_layout_nchwc import is_gpu
from .graph_functions import map_graph_functions
from .transpose_dense_weight import constant_uses
from .winograd_conv2d import is_bare_metal_target


def _eligible(e: X.Expr) -> Optional[Tuple[X.Constant, str, int]]:
    """(weight, its layout "KN" or "NK", units) of a product by a constant weight that takes
    the packed GEMM; None for anything else."""
    matmul = X.is_op_call(e, "relax.matmul")
    if not ((matmul or X.is_op_call(e, "relax.nn.dense")) and len(e.args) == 2):
        return None
    x, w = e.args
    xs = x.struct_info
    if not (isinstance(w, X.Constant) and w.data.ndim == 2 and str(w.data.dtype) == "float32"
            and isinstance(xs, TensorStructInfo) and xs.shape is not None and xs.is_static
            and (matmul or xs.ndim == 2)
            and e.attrs.out_dtype in ("void", "", None, "float32")):
        return None
    k, n = w.data.shape if matmul else w.data.shape[::-1]
    a_shape = tuple(int(d) for d in xs.shape)
    if a_shape[-1] != k or not packed_matmul_applies(a_shape, (k, n), str(xs.dtype)):
        return None
    return w, "KN" if matmul else "NK", n


class _Pack(ExprMutator):
    def __init__(self, func: X.Function, block: int, at_load: bool):
        super().__init__()
        self.block, self.at_load = block, at_load
        self.uses = constant_uses(func)
        self.eligible: Dict[int, int] = {}
        self.packed: Dict[Tuple[int, str], X.Expr] = {}

        def count(e):
            found = _eligible(e)
            if found is not None:
                self.eligible[id(found[0])] = self.eligible.get(id(found[0]), 0) + 1
        post_order_visit(func, count)

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        new = self._rewrite(value)
        self.append_rebound(b, value if new is None else new)

    def _only_packed_products(self, w: X.Constant) -> bool:
        """Whether every read of `w` is the weight of a product this pass rewrites."""
        return self.eligible.get(id(w), 0) == len(self.uses.get(id(w), ()))

    def _rewrite(self, e: X.Expr):
        found = _eligible(e)
        if found is None:
            return None
        w, layout, units = found
        p = self.packed.get((id(w), layout))
        if p is None:
            if self._only_packed_products(w):
                p = X.Constant(dense_pack_weight_numpy(w.data, self.block, layout))
            elif self.at_load:
                p = self.emit(R.nn.contrib_dense_pack_weight_transform(w, self.block, layout),
                              "packed_weight")
            else:
                return None
            self.packed[(id(w), layout)] = p
        out_dtype = e.attrs.out_dtype
        return R.nn.contrib_dense_pack(e.args[0], p, units,
                                       None if out_dtype in ("void", "") else out_dtype)


def pack_dense_weight(mod: IRModule, target=None, at_load: bool = False) -> IRModule:
    """`mod` with its products by constant weights that take the CPU's packed GEMM reading
    those weights packed (see the module docstring); unchanged for a GPU or bare-metal
    `target` (None: this host)."""
    if is_gpu(target) or is_bare_metal_target(target):
        return mod
    block = register_tile(target, "float32")[1]
    return map_graph_functions(mod, lambda f: _Pack(f, block, at_load).visit_expr(f))
