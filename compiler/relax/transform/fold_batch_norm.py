"""fold_batch_norm: inference batch norms become a per-channel scale and shift, and a scale that
follows a convolution or a dense layer with constant weights moves into those weights.

before: bound weights, constants folded (`bind_params`, `fold_constant`).
after:  no `nn.batch_norm` in inference mode is left: `bn(x, g, b, m, v)[0]` is
        `x * s + t` with s = g / sqrt(v + eps), t = b - m * s (shaped to broadcast along the
        axis); `conv2d(x, W) * s` with W and s constant and s per output channel is
        `conv2d(x, W')` with W' = W scaled along its output channels (the same for `conv3d`
        and `dense`),
        so conv2d+bn+relu runs as one convolution kernel with a bias add and a relu fused in.
        Run `fold_constant` afterwards to compute s and t when the statistics are constant.
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
from .fold_constant import fold_constant
from .graph_functions import map_graph_functions


def _channel_shape(ndim: int, axis: int, c) -> tuple:
    return tuple(c if i == axis else 1 for i in range(ndim))


class _Decompose(ExprMutator):
    """bn(...)[0] -> x * s + t."""

    def __init__(self):
        super().__init__()
        self.norms: Dict[int, X.Expr] = {}

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        v = b.value
        if (isinstance(v, X.Call) and isinstance(v.op, X.Op)
                and v.op.name == "relax.nn.batch_norm" and not v.attrs.training):
            x, g, beta, mean, var = (self.visit_expr(a) for a in v.args)
            s = x.struct_info
            if isinstance(s, TensorStructInfo) and s.ndim > 0:
                a = v.attrs
                axis = a.axis % s.ndim
                shape = _channel_shape(s.ndim, axis, -1)
                scale = R.divide(g if a.scale else R.ones_like(g),
                                 R.sqrt(R.add(var, X.const(a.epsilon, s.dtype))))
                shift = R.subtract(beta, R.multiply(mean, scale)) if a.center else \
                    R.negative(R.multiply(mean, scale))
                scale_v = self._emit_flat(R.reshape(scale, shape), "bn_scale")
                shift_v = self._emit_flat(R.reshape(shift, shape), "bn_shift")
                y = self.emit(R.multiply(x, scale_v), "bn_mul")
                out = self.emit(R.add(y, shift_v), "bn_out")
                self.norms[id(b.var)] = out
                self._append(X.VarBinding(b.var, X.Tuple((out, mean, var))))
                return
        super().visit_var_binding_(b)

    def _emit_flat(self, e: X.Expr, name_hint: str) -> X.Var:
        """Binds `e`, its nested calls first (statistics that are not constants stay a
        sequence of one-operator bindings)."""
        args = tuple(self._emit_flat(a, "bn_stat") if isinstance(a, X.Call) else a
                     for a in e.args)
        return self.emit(X.Call(e.op, args, e.attrs, e.sinfo_args), name_hint)

    def visit_tuple_getitem_(self, e: X.TupleGetItem) -> X.Expr:
        norm = self.norms.get(id(e.tuple_value))
        if norm is not None and e.index == 0:
            return norm
        return super().visit_tuple_getitem_(e)


def _per_channel(scale: np.ndarray, out_shape, channel_axis: int) -> Optional[np.ndarray]:
    """`scale` as a vector over the output channels when it broadcasts along that axis alone."""
    nd = len(out_shape)
    if scale.ndim > nd:
        return None
    full = (1,) * (nd - scale.ndim) + scale.shape
    for i, d in enumerate(full):
        if i != channel_axis and d != 1:
            return None
    c = out_shape[channel_axis]
    vec = scale.reshape(-1) if full[channel_axis] != 1 else np.repeat(scale.reshape(-1), c)
    return vec if vec.shape == (c,) else None


# Convolutions whose weight scales along its output channels (axis 0), by (op, data layout,
# kernel layout).
_CONV_LAYOUTS = {("relax.nn.conv2d", "NCHW", "OIHW"), ("relax.nn.conv3d", "NCDHW", "OIDHW")}


class _FoldScale(ExprMutator):
    """conv(x, W) * s -> conv(x, W * s) (conv2d, conv3d) when W, s are constant and s is per
    channel."""

    def __init__(self, counts: Dict[int, int]):
        super().__init__()
        self.counts = counts
        self.producers: Dict[int, X.Call] = {}

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        folded = self._fold(value)
        if folded is not None:
            value = folded
        if isinstance(value, X.Call):
            self.producers[id(b.var)] = value
        self.append_rebound(b, value)

    def _fold(self, e: X.Expr) -> Optional[X.Expr]:
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op)
                and e.op.name == "relax.multiply"):
            return None
        for y, s in (e.args, e.args[::-1]):
            prod = self.producers.get(id(y)) if isinstance(y, X.Var) else None
            if (prod is None or self.counts.get(id(y), 0) != 1 or not isinstance(s, X.Constant)
                    or not isinstance(prod.op, X.Op) or len(prod.args) != 2
                    or not isinstance(prod.args[1], X.Constant)):
                continue
            w = prod.args[1].data
            out = y.struct_info
            if not (isinstance(out, TensorStructInfo) and out.is_static):
                continue
            if (prod.op.name, prod.attrs.get("data_layout"), prod.attrs.get("kernel_layout")) \
                    in _CONV_LAYOUTS:
                vec = _per_channel(s.data, out.shape, 1)
                if vec is not None:
                    w2 = (w * vec.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
                    return X.Call(prod.op, (prod.args[0], X.Constant(w2)), prod.attrs)
            if prod.op.name == "relax.nn.dense":
                vec = _per_channel(s.data, out.shape, len(out.shape) - 1)
                if vec is not None:
                    w2 = (w * vec.reshape(-1, 1)).astype(w.dtype)
                    return X.Call(prod.op, (prod.args[0], X.Constant(w2)), prod.attrs)
        return None


def fold_batch_norm(mod: IRModule) -> IRModule:
    """`mod` with inference batch norms decomposed and their scales folded into weights."""
    mod = fold_constant(map_graph_functions(mod, lambda f: _Decompose().visit_expr(f)))
    return eliminate_dead_code(
        map_graph_functions(mod, lambda f: _FoldScale(use_counts(f)).visit_expr(f)))
