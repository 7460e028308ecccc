"""split_dilated_conv: a dilated convolution whose taps mostly read padding is computed tap by
tap, each over the rectangle of outputs where that tap reads the input.

before: `convert_layout_nchwc` ran (convolutions in NCHW[i]c with OIHW[i]i[o]o constants);
        `trim_conv_taps` cut the taps that no output reads.
after:  a float32 conv2d of that form with a constant weight, stride 1, one group, a dilation
        above 1 and fewer than LIVE_SHARE of its (tap, output pixel) pairs inside the input
        is the sum over its taps of `pad(conv2d_1x1(slice(x), w[tap]))`: the slice is the
        input window the tap reads for its rectangle of outputs (those whose tap position is
        inside the input), the 1 x 1 convolution by that tap's weights computes them, the pad
        places them in the output (zeros elsewhere). The products skipped are those of
        padding, so the result is the convolution's (summed in another order).

        DeepLabv3's ASPP convolves a 14 x 14 map with dilation 12: each edge tap reaches the
        input for 2 of 14 rows, so 18% of the direct convolution's multiply-adds read input;
        tap by tap, the rest are not done (5.4x fewer).
"""
from __future__ import annotations

from ...ir.module import IRModule
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo
from .graph_functions import map_graph_functions

# A convolution is split when fewer than this share of its (tap, output) pairs read input.
LIVE_SHARE = 0.5


def tap_rectangle(size: int, out: int, k: int, dilation: int, pad_before: int):
    """Output positions [lo, hi) along one axis where tap `k` reads the input (stride 1), and
    the input position of `lo`."""
    off = k * dilation - pad_before
    lo, hi = max(0, -off), min(out, size - off)
    return lo, max(lo, hi), lo + off


class _Split(ExprMutator):
    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        self.append_rebound(b, self._rewrite(value) or value)

    def _rewrite(self, e: X.Expr):
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op)
                and e.op.name == "relax.nn.conv2d"):
            return None
        a = e.attrs
        x, w = e.args
        xs, ys = x.struct_info, e.struct_info
        if (a.data_layout == "NCHW" or not isinstance(w, X.Constant) or w.data.ndim != 6
                or a.groups != 1 or tuple(a.strides) != (1, 1) or tuple(a.dilation) == (1, 1)
                or not all(isinstance(s, TensorStructInfo) and s.is_static and s.ndim == 5
                           for s in (xs, ys))):
            return None
        h, wd = (int(d) for d in xs.shape[2:4])
        oh, ow = (int(d) for d in ys.shape[2:4])
        kh, kw = w.data.shape[2:4]
        top, left = a.padding[0], a.padding[1]
        rows = [tap_rectangle(h, oh, k, a.dilation[0], top) for k in range(kh)]
        cols = [tap_rectangle(wd, ow, k, a.dilation[1], left) for k in range(kw)]
        live = sum((r[1] - r[0]) * (c[1] - c[0]) for r in rows for c in cols)
        if live >= LIVE_SHARE * kh * kw * oh * ow:
            return None
        total = None
        for i, (r0, r1, ri) in enumerate(rows):
            for j, (c0, c1, ci) in enumerate(cols):
                if r1 == r0 or c1 == c0:
                    continue
                window = self.emit(R.strided_slice(x, (2, 3), (ri, ci),
                                                   (ri + r1 - r0, ci + c1 - c0)), "tap_in")
                part = self.emit(R.nn.conv2d(
                    window, X.Constant(w.data[:, :, i:i + 1, j:j + 1]),
                    data_layout=a.data_layout, kernel_layout=a.kernel_layout,
                    out_layout=a.out_layout, out_dtype=a.out_dtype), "tap")
                if (r0, r1, c0, c1) != (0, oh, 0, ow):
                    part = self.emit(R.nn.pad(part, ((0, 0), (0, 0), (r0, oh - r1),
                                                     (c0, ow - c1), (0, 0))), "tap_out")
                total = part if total is None else self.emit(R.add(total, part), "taps")
        return total


def split_dilated_conv(mod: IRModule) -> IRModule:
    """`mod` with its sparse-tap dilated convolutions computed tap by tap (see the module
    docstring)."""
    return map_graph_functions(mod, lambda f: _Split().visit_expr(f))
