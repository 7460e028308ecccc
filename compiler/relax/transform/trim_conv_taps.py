"""trim_conv_taps: a convolution's kernel rows and columns that only ever read padding are cut
from its constant weight, with the padding cut to match.

before: bound weights, constants folded (`bind_params`, `fold_constant`); convolutions in
        NCHW with OIHW weights (before `convert_layout_nchwc`).
after:  a `conv2d` with a constant weight and static shapes whose first or last kernel taps
        along H (or W) fall in the zero padding for every output pixel is the same
        convolution with those taps removed from the weight and the padding lowered by the
        rows (columns) they covered: the taps only ever multiplied zeros. A kernel left one
        tap wide along an axis gets dilation 1 along it (the dilation then means nothing).

        A dilated convolution on a small feature map is where this matters: DeepLabv3's ASPP
        convolves a 14 x 14 map with 3 x 3 kernels of dilation 12, 24 and 36; at 24 and 36
        every tap but the centre reads padding alone, so those are 1 x 1 convolutions (9x
        fewer multiply-adds), as every output pixel computes them.

        The result is exact: each removed product was 0 * w. Padding before that would become
        negative (taps cut that some output reaches past the input's start) leaves the
        convolution as it was.
"""
from __future__ import annotations

from typing import Optional, Tuple

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo
from .graph_functions import map_graph_functions


def live_taps(size: int, out: int, kernel: int, stride: int, dilation: int,
              pad_before: int) -> Tuple[int, int]:
    """(first, last) kernel tap along one axis that reads a real input element for at least
    one output position: tap k reads rows o * stride - pad_before + k * dilation for o in
    [0, out)."""
    def live(k: int) -> bool:
        lo = -pad_before + k * dilation
        hi = (out - 1) * stride - pad_before + k * dilation
        return hi >= 0 and lo <= size - 1

    taps = [k for k in range(kernel) if live(k)]
    return (taps[0], taps[-1]) if taps else (0, kernel - 1)


def _trimmed_axis(size, out, kernel, stride, dilation, pad_before) -> Optional[tuple]:
    """(first tap, taps kept, pad before, pad after, dilation) along one axis, or None when
    nothing is cut (or the padding would go negative)."""
    first, last = live_taps(size, out, kernel, stride, dilation, pad_before)
    kept = last - first + 1
    if kept == kernel:
        return None
    before = pad_before - first * dilation
    # the least padding after that still gives `out` positions (input rows past the last
    # window are left unread, as a stride leaves them)
    after = max(0, (out - 1) * stride + dilation * (kept - 1) + 1 - size - before)
    if before < 0 or (size + before + after - dilation * (kept - 1) - 1) // stride + 1 != out:
        return None
    return first, kept, before, after, dilation if kept > 1 else 1


class _Trim(ExprMutator):
    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        self.append_rebound(b, self._rewrite(value) or value)

    @staticmethod
    def _rewrite(e: X.Expr):
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op)
                and e.op.name == "relax.nn.conv2d"):
            return None
        a = e.attrs
        x, w = e.args
        xs, ys = x.struct_info, e.struct_info
        if (a.data_layout != "NCHW" or a.kernel_layout != "OIHW" or not isinstance(w, X.Constant)
                or not all(isinstance(s, TensorStructInfo) and s.is_static and s.ndim == 4
                           for s in (xs, ys))):
            return None
        (h, wd), (oh, ow) = xs.shape[2:], ys.shape[2:]
        kh, kw = w.data.shape[2:]
        top, left, bottom, right = a.padding
        axes = [_trimmed_axis(int(h), int(oh), kh, a.strides[0], a.dilation[0], top),
                _trimmed_axis(int(wd), int(ow), kw, a.strides[1], a.dilation[1], left)]
        if axes == [None, None]:
            return None
        kept_h = axes[0] or (0, kh, top, bottom, a.dilation[0])
        kept_w = axes[1] or (0, kw, left, right, a.dilation[1])
        weight = w.data[:, :, kept_h[0]:kept_h[0] + kept_h[1], kept_w[0]:kept_w[0] + kept_w[1]]
        return R.nn.conv2d(x, X.Constant(weight), strides=a.strides,
                           padding=(kept_h[2], kept_w[2], kept_h[3], kept_w[3]),
                           dilation=(kept_h[4], kept_w[4]), groups=a.groups,
                           data_layout=a.data_layout, kernel_layout=a.kernel_layout,
                           out_layout=a.out_layout, out_dtype=a.out_dtype)


def trim_conv_taps(mod: IRModule) -> IRModule:
    """`mod` with the dead kernel taps of its constant-weight convolutions cut (see the module
    docstring)."""
    return map_graph_functions(mod, lambda f: _Trim().visit_expr(f))
