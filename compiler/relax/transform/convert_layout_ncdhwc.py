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
        changes. The rewrite is convert_layout_nchwc's (`_Convert`), at rank 5 and without
        channel padding; only the operators that start a region differ.
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...topi.nn.layout import transform_numpy
from .. import expr as X
from .. import op as R
from ..op.pattern import BROADCAST, ELEMWISE, pattern_of_op
from .convert_layout_nchwc import (
    _Convert,
    _static_f32,
    blocked_layout,
    convert_module,
    output_block,
)


def blocked_layout3d(block: int) -> str:
    """The data layout of channel blocks of `block` lanes: NCDHW<block>c."""
    return blocked_layout(block, "NCDHW")


class _Convert3d(_Convert):
    PLAIN, NDIM, PAD = "NCDHW", 5, False

    def _convert_call(self, call: X.Call):
        if call.op.name == "relax.nn.conv3d":
            return self._conv3d(call)
        if pattern_of_op(call.op.name) in (ELEMWISE, BROADCAST):
            return self._elementwise(call)
        return None

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


def convert_layout_ncdhwc(mod: IRModule, target=None) -> IRModule:
    """`mod` with its 3-d convolution regions in NCDHW[x]c for the CPU `target` (None: this
    host); the same module for a GPU target or one without them."""
    return convert_module(mod, target, _Convert3d)
