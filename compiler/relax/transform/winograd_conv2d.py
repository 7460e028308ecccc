"""winograd_conv2d: for a CPU target, 3x3 stride-1 convolutions in the blocked layout become
Winograd convolutions with their weights transformed now (as TVM's AlterOpLayout turns conv2d
into contrib_conv2d_winograd_without_weight_transform and FoldConstant transforms the weight).

before: `convert_layout_nchwc` ran (convolutions in NCHW[i]c with OIHW[i]i[o]o constants).
after:  a float32 conv2d of that form with a constant 3x3 weight, stride 1, dilation 1, one
        group, at least WINOGRAD_MIN_CHANNELS input and output channels and an output of at
        least WINOGRAD_MIN_SIZE pixels a side is
        `nn.contrib_conv2d_winograd_without_weight_transform(x, U, tile_size)`, U the weight
        transformed for F(tile_size, 3) (topi.nn.winograd_weight_transform, [a*a, O/o, I, o]).
        tile_size is always 2: F(2, 3) takes 2.25x fewer multiply-adds than the direct
        convolution and its error from a float64 convolution is that of the direct one (ONNX
        Runtime's on ResNet-18's 3x3 layers). F(4, 3) takes 4x fewer but its transforms
        (points 0, +-1, +-2) multiply the rounding error 4-15x on those layers, more than a
        model's output can take beside ONNX Runtime's (ResNet-18's error from a float64 run
        was 4.6x ONNX Runtime's with it); topi.nn.conv2d_winograd_NCHWc still builds it for
        a caller that chooses it. The transformed weight is (a / 3)^2 = 1.8x the size of the
        original: with `at_load` (the graph executor's builds) the model keeps the original
        weight and transforms it with a kernel,
        `contrib_conv2d_winograd_weight_transform(w, tile_size)` — a call on a constant
        alone, which the graph executor runs once after its parameters are set — so the file
        holds the weight at its ONNX size; without it (the VM, the AOT executor, which run
        every kernel of every call) U is a constant computed now. For a GPU target and for a
        bare-metal one (whose flash holds the weights), nothing changes
        (compiler/relax/pipeline.py leaves the pass out where PassContext disables
        "winograd_conv2d").
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...target import Target
from ...target.triple import is_bare_metal
from ...topi.nn.winograd import winograd_weight_transform
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from .convert_layout_nchwc import _static_f32, is_gpu
from .graph_functions import map_graph_functions

# Fewest input and output channels of a convolution made Winograd (below, the transforms and
# the larger weight cost about what the product saves).
WINOGRAD_MIN_CHANNELS = 32
# Smallest output side (height and width) of a convolution made Winograd.
WINOGRAD_MIN_SIZE = 4
# The output tile m of F(m, 3) (see the module docstring).
WINOGRAD_TILE = 2


def winograd_tile_size(out_h: int, out_w: int) -> int:
    """The output tile m of F(m, 3) for an output of `out_h` x `out_w` pixels: F(2, 3) at every
    size (F(4, 3) rounds too coarsely)."""
    return WINOGRAD_TILE


class _Winograd(ExprMutator):
    def __init__(self, at_load: bool):
        super().__init__()
        self.at_load = at_load

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        new = self._rewrite(value)
        if new is not None:
            value = new
        self.append_rebound(b, value)

    def _rewrite(self, e: X.Expr):
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op)
                and e.op.name == "relax.nn.conv2d" and e.attrs.data_layout != "NCHW"):
            return None
        a = e.attrs
        x, w = e.args
        xs, out = _static_f32(x, 5), _static_f32(e, 5)
        if (xs is None or out is None or not isinstance(w, X.Constant) or w.data.ndim != 6
                or w.data.dtype != "float32" or tuple(w.data.shape[2:4]) != (3, 3)
                or a.groups != 1 or tuple(a.strides) != (1, 1) or tuple(a.dilation) != (1, 1)
                or a.out_dtype not in ("void", "float32")):
            return None
        ocb, icb, _, _, ib, ob = w.data.shape
        oh, ow = out[2], out[3]
        if min(icb * ib, ocb * ob) < WINOGRAD_MIN_CHANNELS or min(oh, ow) < WINOGRAD_MIN_SIZE:
            return None
        m = winograd_tile_size(oh, ow)
        u = self.emit(R.nn.contrib_conv2d_winograd_weight_transform(w, m), "winograd_weight") \
            if self.at_load else X.Constant(winograd_weight_transform(w.data, m))
        return R.nn.contrib_conv2d_winograd_without_weight_transform(
            x, u, m, a.padding, data_layout=a.data_layout, out_layout=a.out_layout,
            out_dtype=a.out_dtype)


def is_bare_metal_target(target) -> bool:
    """Whether `target` (None: this host) names a bare-metal triple (its flash holds the
    weights: a pass that would grow or copy them leaves it alone)."""
    triple = Target(target).attrs.get("mtriple") if target is not None else None
    return bool(triple) and is_bare_metal(triple)


def winograd_conv2d(mod: IRModule, target=None, at_load: bool = False) -> IRModule:
    """`mod` with its eligible blocked 3x3 convolutions made Winograd ones for the CPU
    `target` (None: this host); unchanged for a GPU target. With `at_load`, each weight is
    transformed by a kernel of the model (see the module docstring), else now."""
    if is_gpu(target) or is_bare_metal_target(target):
        return mod
    return map_graph_functions(mod, lambda f: _Winograd(at_load).visit_expr(f))
