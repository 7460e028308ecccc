"""quantize_to_integer: float operators between dequantize and quantize become integer operators
(TVM's FakeQuantizationToInteger).

before: `bind_params` ran (scales and zero points are constants); a quantized model is float
        operators between relax.qnn.dequantize (DQ) and relax.qnn.quantize (Q), as the ONNX
        frontend imports QDQ models.
after:  with the Q's scale and zero point per tensor, and the DQs' constant:
        - Q(conv2d(DQ(x), DQ(w)) [+ reshape(DQ(bias))] [relu]) (NCHW / OIHW, x per tensor, w
          per tensor or per output channel) is qnn.conv2d(x, w) [+ bias], requantized;
        - Q(dense(DQ(x), DQ(w)) [+ DQ(bias)] [relu]) and Q(matmul(DQ(x), DQ(w)) ...) with w
          2-D (per tensor or per output column) are qnn.matmul [+ bias], requantized;
        - Q(op(DQ(x))) for an operator that only moves or selects values (max_pool2d,
          reshape, permute_dims, squeeze, expand_dims, concat of DQs) with every DQ's scale,
          zero point and type the Q's is op(x) on the integers.
        The int32 bias is added as it is when its scale is x_scale * w_scale (within 1e-6, as
        ONNX Runtime's quantizer writes it) and its zero point 0; a relu becomes a clamp at the
        output zero point. The requantize multiplier x_scale * w_scale / y_scale and the
        rescale of the int32 sums are float32 arithmetic, each step rounded as ONNX Runtime's
        fused QLinearConv / QLinearMatMul rounds it, so the result is the one ONNX Runtime
        computes with its graph optimizations on, and the float model's (DQ -> float op -> Q)
        within one step where a float32 rounding crosses a half (about 2 values in 10^5).
        Everything else stays as it was.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from .graph_functions import map_graph_functions

# Operators that move or select values: op(DQ(x)) quantized back with the same parameters is
# op(x) (argument 0 is the data).
_VALUE_PRESERVING = frozenset({"relax.nn.max_pool2d", "relax.reshape", "relax.permute_dims",
                               "relax.squeeze", "relax.expand_dims", "relax.flatten"})
# Relative difference tolerated between a bias's scale and x_scale * w_scale.
BIAS_SCALE_RTOL = 1e-6


def _const(e) -> Optional[np.ndarray]:
    return e.data if isinstance(e, X.Constant) else None


def _scale_product(dx: _Dequantized, dw: _Dequantized) -> np.ndarray:
    """x_scale * w_scale (per w channel) rounded to float32, as ONNX Runtime's fused kernels
    compute it."""
    return (np.float32(dx.scale.reshape(())) *
            dw.scale.astype(np.float32).reshape(-1)).astype(np.float32)


def _scalar(e) -> Optional[np.ndarray]:
    d = _const(e)
    return d if d is not None and d.size == 1 else None


class _Dequantized:
    """A DQ's operands: the integer tensor, its constant scale and zero point, and axis."""

    def __init__(self, call: X.Call):
        self.x, self.scale_expr, self.zp_expr = call.args
        self.scale, self.zp = _const(self.scale_expr), _const(self.zp_expr)
        self.axis = call.attrs.axis
        self.dtype = self.x.struct_info.dtype

    @property
    def per_tensor(self) -> bool:
        return self.scale is not None and self.zp is not None and self.scale.size == 1 \
            and self.zp.size == 1

    def per_axis(self, axis: int, ndim: int) -> bool:
        """Per tensor, or per channel along `axis` of an ndim-d tensor."""
        if self.scale is None or self.zp is None:
            return False
        return self.per_tensor or self.axis % ndim == axis


class _Rewriter(ExprMutator):
    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        if X.is_op_call(value, "relax.qnn.quantize"):
            new = self._rewrite(value)
            if new is not None:
                value = new
        self.append_rebound(b, value)

    # ---- looking through bindings -------------------------------------------------------------
    def _value(self, e: X.Expr) -> X.Expr:
        if isinstance(e, X.Var):
            bound = self.lookup_binding(e)
            return bound if bound is not None else e
        return e

    def _dq(self, e: X.Expr) -> Optional[_Dequantized]:
        v = self._value(e)
        return _Dequantized(v) if X.is_op_call(v, "relax.qnn.dequantize") else None

    # ---- the rewrite --------------------------------------------------------------------------
    def _rewrite(self, q: X.Call) -> Optional[X.Expr]:
        y_scale, y_zp = _scalar(q.args[1]), _scalar(q.args[2])
        if y_scale is None or y_zp is None:
            return None
        out_dtype = q.attrs.out_dtype
        inner = self._value(q.args[0])
        moved = self._value_preserving(inner, y_scale, y_zp, out_dtype)
        if moved is not None:
            return moved
        relu = X.is_op_call(inner, "relax.nn.relu")
        if relu:
            inner = self._value(inner.args[0])
        bias = None
        if X.is_op_call(inner, "relax.add"):
            for i in (0, 1):
                anchor = self._value(inner.args[i])
                if any(X.is_op_call(anchor, n)
                       for n in ("relax.nn.conv2d", "relax.nn.dense", "relax.matmul")):
                    bias, inner = inner.args[1 - i], anchor
                    break
            else:
                return None
        if X.is_op_call(inner, "relax.nn.conv2d"):
            made = self._conv2d(inner, bias)
        elif X.is_op_call(inner, "relax.nn.dense") or X.is_op_call(inner, "relax.matmul"):
            made = self._matmul(inner, bias)
        else:
            return None
        if made is None:
            return None
        acc, in_scale, axis = made
        multiplier = (in_scale / np.float32(y_scale.reshape(()))).astype(np.float32)
        m = X.const(multiplier.reshape(()) if multiplier.size == 1 else multiplier, "float32")
        zy = X.const(np.asarray(int(y_zp.reshape(())), "int32"), "int32")
        y = R.qnn.requantize(self.emit(acc, "acc"), m, zy, axis, out_dtype)
        if relu:
            y = R.maximum(self.emit(y, "requantized"),
                          X.const(np.asarray(int(y_zp.reshape(())), out_dtype), out_dtype))
        return y

    def _conv2d(self, conv: X.Call, bias: Optional[X.Expr]):
        a = conv.attrs
        if a.data_layout != "NCHW" or a.kernel_layout != "OIHW" or \
                a.out_dtype not in ("void", "float32", ""):
            return None
        dx, dw = self._dq(conv.args[0]), self._dq(conv.args[1])
        if dx is None or dw is None or not dx.per_tensor or not dw.per_axis(0, 4) or \
                dx.dtype not in ("int8", "uint8") or dw.dtype not in ("int8", "uint8"):
            return None
        in_scale = _scale_product(dx, dw)
        acc = R.qnn.conv2d(dx.x, dw.x, dx.zp_expr, dw.zp_expr, strides=a.strides,
                           padding=a.padding, dilation=a.dilation, groups=a.groups)
        if bias is not None:
            b = self._int_bias(bias, dx, dw, channels_first=True)
            if b is None:
                return None
            acc = R.add(self.emit(acc, "acc"), R.reshape(b, (1, -1, 1, 1)))
        return acc, in_scale, 1

    def _matmul(self, mm: X.Call, bias: Optional[X.Expr]):
        if mm.attrs.out_dtype not in ("void", "float32", ""):
            return None
        dense = X.is_op_call(mm, "relax.nn.dense")
        dx, dw = self._dq(mm.args[0]), self._dq(mm.args[1])
        if dx is None or dw is None or not dx.per_tensor or \
                dx.dtype not in ("int8", "uint8") or dw.dtype not in ("int8", "uint8"):
            return None
        ws, xs = dw.x.struct_info, dx.x.struct_info
        if ws.ndim != 2 or xs.ndim < 2 or not dw.per_axis(0 if dense else 1, 2):
            return None
        w = R.permute_dims(dw.x, (1, 0)) if dense else dw.x
        in_scale = _scale_product(dx, dw)
        acc = R.qnn.matmul(dx.x, self.emit(w, "weight") if dense else w, dx.zp_expr,
                           dw.zp_expr)
        if bias is not None:
            b = self._int_bias(bias, dx, dw, channels_first=False)
            if b is None:
                return None
            acc = R.add(self.emit(acc, "acc"), b)
        return acc, in_scale, xs.ndim - 1

    def _int_bias(self, bias: X.Expr, dx: _Dequantized, dw: _Dequantized,
                  channels_first: bool) -> Optional[X.Expr]:
        """The int32 tensor of a bias DQ(b) (reshaped to a channel vector for a conv) whose
        scale is x_scale * w_scale and zero point 0, else None."""
        v = self._value(bias)
        if channels_first and X.is_op_call(v, "relax.reshape"):
            v = self._value(v.args[0])
        if not X.is_op_call(v, "relax.qnn.dequantize"):
            return None
        db = _Dequantized(v)
        if db.dtype != "int32" or db.scale is None or db.zp is None or np.any(db.zp != 0) or \
                db.x.struct_info.ndim != 1:
            return None
        want = (dx.scale.astype(np.float64).reshape(()) *
                dw.scale.astype(np.float64).reshape(-1))
        have = np.broadcast_to(db.scale.astype(np.float64).reshape(-1), want.shape)
        if not np.all(np.abs(have - want) <= BIAS_SCALE_RTOL * np.abs(want)):
            return None
        return db.x

    def _value_preserving(self, inner: X.Expr, y_scale, y_zp, out_dtype) -> Optional[X.Expr]:
        if not isinstance(inner, X.Call) or not isinstance(inner.op, X.Op):
            return None

        def same(dq: Optional[_Dequantized]) -> bool:
            return dq is not None and dq.per_tensor and dq.dtype == out_dtype and \
                np.float32(dq.scale.reshape(())) == np.float32(y_scale.reshape(())) and \
                int(dq.zp.reshape(())) == int(y_zp.reshape(()))

        name = inner.op.name
        if name in _VALUE_PRESERVING:
            dq = self._dq(inner.args[0])
            if not same(dq):
                return None
            return X.Call(inner.op, (dq.x,) + tuple(inner.args[1:]), inner.attrs,
                          inner.sinfo_args)
        if name == "relax.concat":
            parts = self._value(inner.args[0])
            if not isinstance(parts, X.Tuple):
                return None
            dqs = [self._dq(f) for f in parts.fields]
            if not all(same(d) for d in dqs):
                return None
            return X.Call(inner.op, (X.Tuple(tuple(d.x for d in dqs)),) + tuple(inner.args[1:]),
                          inner.attrs, inner.sinfo_args)
        return None


def quantize_to_integer(mod: IRModule) -> IRModule:
    """`mod` with its dequantize -> float operator -> quantize patterns on integers."""
    return map_graph_functions(mod, lambda f: _Rewriter().visit_expr(f))
