"""fold_quantize_scale: the float scale and shift between a dequantize and a quantize move into
their parameters, so an integer kernel's epilogue is one multiply, one add and the rounding.

before: fold_batch_norm ran (a batch norm between quantized tensors, as ONNX Runtime's
        quantizer leaves it without pre-processing, is `DQ(x) * s + t`, s and t constants).
after:  Q(clip(DQ(x, sx, zx) * c + t, lo, hi), sy, zy), each of `* c`, `+ t` and the clip
        optional (one of `* c`, `+ t` present), c and t float32 constants that are scalars
        or one value per channel along DQ's axis 1, sx per tensor or along axis 1, sy and zy
        per tensor, every intermediate value used once, is
            Q(clip(DQ(x, sx * c / sy, zx) + t / sy, lo / sy, hi / sy), 1, zy)
        (zx per tensor or along axis 1) with the new scale, shift and bounds computed now
        (in float64, rounded once to float32): the division by sy and one multiply leave
        each element. The values round differently from the float model's sequence of
        float32 operations, which moves an element at most one step where a rounding
        crosses a half, as reordering that sequence would.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo
from .eliminate_dead_code import eliminate_dead_code, use_counts
from .graph_functions import map_graph_functions


def _channels(data: np.ndarray, ndim: int) -> Optional[np.ndarray]:
    """A float constant broadcast over an ndim-d NCHW-like tensor as one value, or one value
    per channel (axis 1): that vector (length 1 or C), else None."""
    if data.dtype != np.float32 or data.ndim > ndim:
        return None
    full = (1,) * (ndim - data.ndim) + data.shape
    if any(d != 1 for i, d in enumerate(full) if i != 1):
        return None
    return data.reshape(-1).astype(np.float64)


class _Fold(ExprMutator):
    def __init__(self, counts: Dict[int, int]):
        super().__init__()
        self.counts = counts

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        if X.is_op_call(value, "relax.qnn.quantize"):
            folded = self._fold(value)
            if folded is not None:
                value = folded
        self.append_rebound(b, value)

    def _single(self, e: X.Expr) -> Optional[X.Expr]:
        """The value bound to `e` when `e` is a variable used once (through aliases)."""
        while isinstance(e, X.Var) and self.counts.get(id(e), 0) == 1:
            e = self.lookup_binding(e)
            if not isinstance(e, X.Var):
                return e
        return None

    def _operand(self, v: Optional[X.Expr], name: str, ndim: int):
        """(the per-channel constant, the other operand's value) of `v` = name(y, c) or
        name(c, y) with y used once; (None, v) otherwise."""
        if X.is_op_call(v, name):
            for y, c in (v.args, v.args[::-1]):
                if isinstance(c, X.Constant):
                    vec, inner = _channels(c.data, ndim), self._single(y)
                    if vec is not None and inner is not None:
                        return vec, inner
        return None, v

    def _fold(self, q: X.Call) -> Optional[X.Expr]:
        sy, zy = q.args[1], q.args[2]
        if not isinstance(sy, X.Constant) or sy.data.size != 1 or \
                not isinstance(zy, X.Constant) or zy.data.size != 1:
            return None
        s = q.args[0].struct_info
        if not isinstance(s, TensorStructInfo) or s.dtype != "float32" or s.ndim < 2:
            return None
        v = self._single(q.args[0])
        bounds = None
        if X.is_op_call(v, "relax.clip"):
            lo, hi = v.args[1], v.args[2]
            if not all(isinstance(p, X.PrimValue) and isinstance(p.value, (int, float))
                       for p in (lo, hi)):
                return None
            bounds, v = (float(lo.value), float(hi.value)), self._single(v.args[0])
        shift, v = self._operand(v, "relax.add", s.ndim)
        scale, v = self._operand(v, "relax.multiply", s.ndim)
        if (shift is None and scale is None) or not X.is_op_call(v, "relax.qnn.dequantize"):
            return None
        x, sx, zx = v.args
        if not all(isinstance(p, X.Constant) and (p.data.size == 1 or v.attrs.axis % s.ndim == 1)
                   for p in (sx, zx)):
            return None
        y = float(np.float64(sy.data.reshape(())))
        m = sx.data.reshape(-1).astype(np.float64) * (1.0 if scale is None else scale) / y
        m = m.astype(np.float32)
        out = R.qnn.dequantize(x, X.const(m.reshape(()) if m.size == 1 else m, "float32"),
                               zx, 1, "float32")
        if shift is not None:
            t = (shift / y).astype(np.float32)
            t = t.reshape(()) if t.size == 1 else t.reshape((1, -1) + (1,) * (s.ndim - 2))
            out = R.add(self.emit(out, "dq"), X.const(t, "float32"))
        if bounds is not None:
            lo, hi = (float(np.float32(b / y)) for b in bounds)
            z, info = int(zy.data.reshape(())), np.iinfo(q.attrs.out_dtype)
            if np.rint(lo) + z > info.min or np.rint(hi) + z < info.max:
                out = R.clip(self.emit(out, "dq_shifted"), lo, hi)
        one = X.const(np.asarray(1.0, np.float32), "float32")
        return R.qnn.quantize(self.emit(out, "prequantized"), one, zy, q.attrs.axis,
                              q.attrs.out_dtype)


def fold_quantize_scale(mod: IRModule) -> IRModule:
    """`mod` with the constant scales and shifts between dequantizes and quantizes folded into
    them."""
    return eliminate_dead_code(
        map_graph_functions(mod, lambda f: _Fold(use_counts(f)).visit_expr(f)))
