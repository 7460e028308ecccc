"""convert_layout_ncdhwc: for a CPU target, 3-d convolution regions run in the blocked layout
NCDHW[x]c (x: the channel block, up to the target's float32 vector lanes), converted once; the
3-d counterpart of `convert_layout_nchwc`.

before: weights bound (constants), batch norms folded (`fold_batch_norm`), not yet fused.
after:  every float32 conv3d of NCDHW data with OIDHW weights and groups 1 is a conv3d of
        NCDHW[i]c data with OIDHW[i]i[o]o weights giving NCDHW[o]c, o = `output_block` of the
        output channels, i = the block its input already has, else `output_block` of the
        input channels (a video's 3 colour channels: a block of 3). No channel is padded.
        Constant weights are transformed now. The value a blocked convolution produces stays
        blocked through what consumes it in that layout:
          - elementwise operators of one tensor (relu, clip, sigmoid, ...);
          - broadcast binary operators (add, multiply, ...) of values blocked alike (one may be
            per channel, [N, C, 1, 1, 1]), or of a blocked value and a constant that is a
            scalar or per channel ([C, 1, 1, 1] or [1, C, 1, 1, 1]: a folded bias; blocked
            now), when the result keeps the blocked operand's shape;
        and is brought back to NCDHW (`layout_transform`) once, where something else reads it
        (a pool, flatten, the function's result, ...). NCDHW data entering a blocked
        convolution gets one `layout_transform` in. So a video ResNet's body (convolution,
        bias, residual add, relu) runs with no per-layer reorders. For a GPU target nothing
        changes.
"""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import numpy as np

from ...ir.module import IRModule
from ...target.isa import vector_isa
from ...topi.nn.layout import transform_numpy
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..op.pattern import BROADCAST, ELEMWISE, pattern_of_op
from ..struct_info import TensorStructInfo
from .convert_layout_nchwc import _static_f32, is_gpu, keep_nchw, output_block
from .graph_functions import is_graph_function


def blocked_layout3d(block: int) -> str:
    """The data layout of channel blocks of `block` lanes: NCDHW<block>c."""
    return f"NCDHW{block}c"


class _Convert3d(ExprMutator):
    def __init__(self, lanes: int, keep: Set[int]):
        super().__init__()
        self.lanes = lanes
        self.keep = keep          # ids of vars that must exist in NCDHW where they are bound
        self.blocked: Dict[int, Tuple[X.Var, int]] = {}   # NCDHW var -> (blocked var, block)
        self.pending: Dict[int, X.Var] = {}   # converted vars not bound in NCDHW yet
        self.ncdhw: Dict[int, X.Var] = {}     # their NCDHW values, once made

    # ---- values as consumers need them -----------------------------------------------------
    def visit_var_(self, v: X.Var) -> X.Expr:
        if id(v) in self.pending:
            made = self.ncdhw.get(id(v))
            if made is None:
                bv, block = self.blocked[id(v)]
                made = self.emit(R.layout_transform(bv, blocked_layout3d(block), "NCDHW"),
                                 v.name_hint + "_ncdhw")
                self.ncdhw[id(v)] = made
            return made
        return super().visit_var_(v)

    def _as_blocked(self, e: X.Expr, block: Optional[int], channels: int, name: str):
        """(blocked value, block) of the NCDHW value `e`: its blocked form when it has one
        (with `block`, when given), else a layout_transform of it."""
        if isinstance(e, X.Var) and id(e) in self.blocked:
            bv, b = self.blocked[id(e)]
            if block is None or b == block:
                return bv, b
        b = block or output_block(channels, self.lanes)
        bv = self.emit(R.layout_transform(self.visit_expr(e), "NCDHW", blocked_layout3d(b)),
                       name)
        if isinstance(e, X.Var) and id(e) not in self.blocked:
            self.blocked[id(e)] = (bv, b)     # e stays bound in NCDHW too (not pending)
        return bv, b

    # ---- bindings ---------------------------------------------------------------------------
    def visit_var_binding_(self, b: X.VarBinding) -> None:
        v = b.value
        made = None
        if isinstance(v, X.Var) and id(v) in self.blocked:   # an alias
            if id(v) not in self.pending:
                self.blocked[id(b.var)] = self.blocked[id(v)]
                super().visit_var_binding_(b)
                return
            made = self.blocked[id(v)]
        elif isinstance(v, X.Call) and isinstance(v.op, X.Op):
            if v.op.name == "relax.nn.conv3d":
                made = self._conv3d(v)
            elif pattern_of_op(v.op.name) in (ELEMWISE, BROADCAST):
                made = self._elementwise(v)
        if made is None:
            super().visit_var_binding_(b)
            return
        value, block = made
        bv = value if isinstance(value, X.Var) else self.emit(value, b.var.name_hint + "_c")
        self.blocked[id(b.var)] = (bv, block)
        if id(b.var) in self.keep:
            self._append(X.VarBinding(b.var, R.layout_transform(bv, blocked_layout3d(block),
                                                                "NCDHW")))
        else:
            self.pending[id(b.var)] = b.var

    def _conv3d(self, call: X.Call):
        a = call.attrs
        x, w = call.args
        xs, ws = _static_f32(x, 5), _static_f32(w, 5)
        if (xs is None or ws is None or a.data_layout != "NCDHW" or a.kernel_layout != "OIDHW"
                or a.out_layout not in ("NCDHW", "") or a.out_dtype not in ("void", "float32")
                or a.groups != 1):
            return None
        ob = output_block(ws[0], self.lanes)
        data, ib = self._as_blocked(x, None, xs[1], getattr(x, "name_hint", "x") + "_c")
        klayout = f"OIDHW{ib}i{ob}o"
        if isinstance(w, X.Constant):
            weight = X.Constant(transform_numpy(w.data, "OIDHW", klayout))
        else:
            weight = self.emit(R.layout_transform(self.visit_expr(w), "OIDHW", klayout),
                               "weight_c")
        out = R.nn.conv3d(data, weight, a.strides, a.padding, a.dilation, 1,
                          data_layout=blocked_layout3d(ib), kernel_layout=klayout,
                          out_layout=blocked_layout3d(ob), out_dtype=a.out_dtype)
        return out, ob

    def _elementwise(self, call: X.Call):
        out = _static_f32(call, 5) if isinstance(call.struct_info, TensorStructInfo) else None
        tensors = [i for i, arg in enumerate(call.args)
                   if isinstance(arg.struct_info, TensorStructInfo)]
        blocked = [i for i in tensors if isinstance(call.args[i], X.Var)
                   and id(call.args[i]) in self.blocked]
        if out is None or not blocked:
            return None
        block = self.blocked[id(call.args[blocked[0]])][1]
        args = list(call.args)
        for i in tensors:
            arg = call.args[i]
            if i in blocked:
                bv, b = self.blocked[id(arg)]
                shape = _static_f32(arg, 5)
                if b != block or shape not in (out, (out[0], out[1], 1, 1, 1)):
                    return None
                args[i] = bv
            elif isinstance(arg, X.Constant):
                const = _block_constant(arg.data, out[1], block)
                if const is None:
                    return None
                args[i] = const
            elif _static_f32(arg, 5) == out:
                args[i] = self._as_blocked(arg, block, out[1],
                                           getattr(arg, "name_hint", "v") + "_c")[0]
            else:
                return None
        return X.Call(call.op, tuple(args), call.attrs, call.sinfo_args), block


def _block_constant(data: np.ndarray, channels: int, block: int) -> Optional[X.Constant]:
    """A constant that broadcasts against NCDHW data of `channels` channels as one against
    NCDHW[block]c: a scalar (any shape of ones, at most 6 dims) as it is, a per-channel one
    ([C, 1, 1, 1] or [1, C, 1, 1, 1]) blocked; else None."""
    if data.size == 1:
        return X.Constant(data) if data.ndim <= 6 else None
    if data.ndim > 5:
        return None
    full = (1,) * (5 - data.ndim) + data.shape
    if full != (1, channels, 1, 1, 1):
        return None
    return X.Constant(transform_numpy(data.reshape(full), "NCDHW", blocked_layout3d(block)))


def convert_layout_ncdhwc(mod: IRModule, target=None) -> IRModule:
    """`mod` with its 3-d convolution regions in NCDHW[x]c for the CPU `target` (None: this
    host); the same module for a GPU target or one without them."""
    if is_gpu(target):
        return mod
    lanes = vector_isa(target).lanes("float32")
    if lanes < 2:
        return mod
    functions = {}
    changed = False
    for name, func in mod.items():
        if is_graph_function(func):
            new = _Convert3d(lanes, keep_nchw(func)).visit_expr(func)
            changed = changed or new is not func
            func = new
        functions[name] = func
    return mod.with_functions(functions) if changed else mod
