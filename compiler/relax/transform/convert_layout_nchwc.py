"""convert_layout_nchwc: for a CPU target, convolution regions run in the blocked layout
NCHW[x]c (x: the channel block, the target's float32 vector lanes), converted once.

before: weights bound (constants), batch norms folded (`fold_batch_norm`), not yet fused.
after:  every float32 conv2d of NCHW data with OIHW weights, groups 1, depthwise (groups = in = out
        channels) or grouped in whole vectors (channels per group, in and out, multiples of x), is a
        conv2d of NCHW[i]c data with OIHW[i]i[o]o weights (depthwise: OIHW1i[o]o; grouped: the
        groups kept, o = x) giving NCHW[o]c, o = `output_block` of the output channels (their
        largest divisor up to x, or a power-of-two divisor at least half as wide: 1000 -> 8, not
        10), i = the block its input already has, else the largest divisor of the input channels up
        to x. A channel count whose block would be narrower than x, and that a few more channels
        make a multiple of x (at most 1/8 more: ShuffleNet's 58, 116 and 232, RegNet's 104), is
        padded with zero channels to one (`channel_block`): zero weights, zero constants, and the
        padded lanes cropped where the value goes back to NCHW. Only operators that keep zeros
        finite see padded lanes (`_PAD_SAFE`), so what a padded lane holds is never read into a real
        one. A grouped conv2d with as many output channels as input, groups of g channels (g
        dividing x, below it: RegNet's groups of 8, ResNeXt's of 4 and 8) and a constant weight
        runs in blocks of x lanes, each holding x / g whole groups (weight OIHW[g]i[x]o; the
        padded channels of a block form groups of zeros). Constant weights are transformed now.
        The value a blocked convolution produces stays blocked through what consumes it in
        that layout:
          - elementwise operators of one tensor (relu, clip, sigmoid, ...);
          - broadcast binary operators (add, multiply, ...) of values blocked alike (one may
            be per channel, [N, C, 1, 1]: a squeeze-and-excitation scale), or of a blocked
            value and a constant that is a scalar or per channel (the constant is blocked
            now), when the result keeps the blocked operand's shape;
          - max / avg pool2d, and adaptive pools to (1, 1);
          - concat along the channels of values blocked alike (or made so), each a whole
            number of blocks (SqueezeNet's fire modules, DenseNet's, Inception's);
        and is brought back to NCHW (`layout_transform`) once, where something else reads it
        (flatten, dense, reshape, the function's result, ...). NCHW data entering a blocked
        convolution gets one `layout_transform` in. So a ResNet or MobileNet body runs with no
        per-layer reorders. For a GPU target nothing changes.
"""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import numpy as np

from ...ir.module import IRModule
from ...target import Target
from ...target.isa import vector_isa
from ...topi.nn.layout import transform_numpy
from ...topi.utils import divisor_at_most
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator, post_order_visit
from ..op.pattern import BROADCAST, ELEMWISE, pattern_of_op
from ..struct_info import TensorStructInfo

_POOLS = {"relax.nn.max_pool2d", "relax.nn.avg_pool2d"}
_ADAPTIVE = {"relax.nn.adaptive_avg_pool2d", "relax.nn.adaptive_max_pool2d"}


def blocked_layout(block: int, plain: str = "NCHW") -> str:
    """The data layout of channel blocks of `block` lanes: NCHW<block>c (of `plain`)."""
    return f"{plain}{block}c"


def output_block(channels: int, lanes: int) -> int:
    """The channel block of a convolution's output: the largest divisor of `channels` up to
    `lanes`, unless a power-of-two divisor at least half as wide exists (then that one): a
    block of 10, 12 or 15 lanes is a vector LLVM splits into pieces or masks (SqueezeNet's
    1000 classes in blocks of 10 ran at 60% of the speed of its 16-lane convolutions), one of
    8 is a whole narrower vector."""
    widest = divisor_at_most(channels, lanes)
    power = max(p for p in (1, 2, 4, 8, 16, 32, 64) if p <= lanes and channels % p == 0)
    return power if 2 * power >= widest else widest


def channel_block(channels: int, lanes: int) -> Tuple[int, int]:
    """(block, padded channel count) of `channels` channels blocked for `lanes` lanes: the
    output block, or whole vectors of `lanes` when that block is narrower and at most 1/8 more
    channels (zeros) make a multiple of `lanes` (116 -> 128 in blocks of 16, not 29 blocks of
    4)."""
    block = output_block(channels, lanes)
    padded = -(-channels // lanes) * lanes
    if block < lanes and padded * 8 <= channels * 9:
        return lanes, padded
    return block, channels


def _pad_axis(data: np.ndarray, axis: int, size: int, value: float = 0.0) -> np.ndarray:
    """`data` with its dim `axis` padded to `size` by `value`."""
    if data.shape[axis] == size:
        return data
    width = [(0, 0)] * data.ndim
    width[axis] = (0, size - data.shape[axis])
    return np.pad(data, width, constant_values=value)


# Operators a value with zero-padded channels may pass through blocked: on zeros (and the zero
# or one a constant is padded with) they give finite values, which only padded lanes hold.
_PAD_SAFE = {"relax." + n for n in (
    "add", "subtract", "multiply", "maximum", "minimum", "clip", "sigmoid", "tanh", "exp",
    "negative", "abs", "erf", "nn.relu", "nn.leakyrelu", "nn.gelu", "nn.gelu_tanh",
    "nn.silu")} | {"relax.divide"}   # divide: by a constant only (padded with ones)


def _static_f32(e: X.Expr, ndim: int) -> Optional[tuple]:
    s = e.struct_info
    if (isinstance(s, TensorStructInfo) and s.dtype == "float32" and s.ndim == ndim
            and s.is_static):
        return tuple(int(d) for d in s.shape)
    return None


class _Convert(ExprMutator):
    """The blocked-layout rewrite of one function: values of rank NDIM in layout PLAIN go to
    PLAIN[x]c where a convolution can start a region (`_convert_call`); PAD: channel counts
    may be padded to whole vectors (`channel_block`). convert_layout_ncdhwc's subclass does
    the same for 3-d convolutions."""
    PLAIN, NDIM, PAD = "NCHW", 4, True

    def __init__(self, lanes: int, keep: Set[int]):
        super().__init__()
        self.lanes = lanes
        self.keep = keep          # ids of vars that must exist in NCHW where they are bound
        self.blocked: Dict[int, Tuple[X.Var, int]] = {}   # NCHW var -> (blocked var, block)
        self.pending: Dict[int, X.Var] = {}   # converted vars not bound in NCHW yet
        self.nchw: Dict[int, X.Var] = {}      # their NCHW values, once made

    # ---- values as consumers need them -----------------------------------------------------
    def visit_var_(self, v: X.Var) -> X.Expr:
        if id(v) in self.pending:
            made = self.nchw.get(id(v))
            if made is None:
                bv, block = self.blocked[id(v)]
                made = self.emit(self._to_nchw(bv, block, v), v.name_hint + "_nchw")
                self.nchw[id(v)] = made
            return made
        return super().visit_var_(v)

    def _to_nchw(self, blocked: X.Var, block: int, like: X.Expr) -> X.Expr:
        """The NCHW value of `blocked` (in NCHW[block]c), its padded channels cropped to those
        of `like` (the NCHW value it stands for)."""
        out = R.layout_transform(blocked, blocked_layout(block, self.PLAIN), self.PLAIN)
        channels = int(like.struct_info.shape[1])
        if _channels(blocked, block) != channels:
            out = R.strided_slice(self.emit(out, like.name_hint + "_padded"), [1], [0],
                                  [channels])
        return out

    def _as_blocked(self, e: X.Expr, block: Optional[int], channels: int, name: str):
        """(blocked value, block) of the NCHW value `e`: its blocked form when it has one (with
        `block`, when given), else a layout_transform of it."""
        if isinstance(e, X.Var) and id(e) in self.blocked:
            bv, b = self.blocked[id(e)]
            if block is None or b == block:
                return bv, b
        b = block or (channel_block(channels, self.lanes)[0] if self.PAD
                      else output_block(channels, self.lanes))
        padded = -(-channels // b) * b          # more than `channels`: zero channels added
        data = self.visit_expr(e)
        if padded != channels:
            width = [0, 0, 0, padded - channels] + [0, 0] * (self.NDIM - 2)
            data = self.emit(R.nn.pad(data, width), name + "_pad")
        bv = self.emit(R.layout_transform(data, self.PLAIN, blocked_layout(b, self.PLAIN)),
                       name)
        if isinstance(e, X.Var) and id(e) not in self.blocked:
            self.blocked[id(e)] = (bv, b)     # e stays bound in NCHW too (not pending)
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
            made = self._convert_call(v)
        if made is None:
            super().visit_var_binding_(b)
            return
        value, block = made
        bv = value if isinstance(value, X.Var) else self.emit(value, b.var.name_hint + "_c")
        self.blocked[id(b.var)] = (bv, block)
        if id(b.var) in self.keep:
            self._append(X.VarBinding(b.var, self._to_nchw(bv, block, b.var)))
        else:
            self.pending[id(b.var)] = b.var

    def _convert_call(self, call: X.Call):
        """(blocked value, block) of an operator call that runs blocked, or None."""
        name = call.op.name
        if name == "relax.nn.conv2d":
            return self._conv2d(call)
        if name in _POOLS or name in _ADAPTIVE:
            return self._pool(call)
        if name == "relax.concat":
            return self._concat(call)
        if pattern_of_op(name) in (ELEMWISE, BROADCAST):
            return self._elementwise(call)
        return None

    def _conv2d(self, call: X.Call):
        a = call.attrs
        x, w = call.args
        xs, ws = _static_f32(x, 4), _static_f32(w, 4)
        if (xs is None or ws is None or a.data_layout != "NCHW" or a.kernel_layout != "OIHW"
                or a.out_layout not in ("NCHW", "") or a.out_dtype not in ("void", "float32")):
            return None
        c, o = xs[1], ws[0]
        depthwise = a.groups > 1
        if depthwise and not (a.groups == c == o and ws[1] == 1):
            return self._grouped_conv2d(call, c, o)
        ob, o_pad = channel_block(o, self.lanes)
        if depthwise:
            data, ib = self._as_blocked(x, ob, c, x.name_hint + "_c")
            klayout = f"OIHW1i{ob}o"
        else:
            data, ib = self._as_blocked(x, None, c, getattr(x, "name_hint", "x") + "_c")
            klayout = f"OIHW{ib}i{ob}o"
        c_pad = _channels(data, ib)
        if not isinstance(w, X.Constant) and (o_pad != o or (c_pad != c and not depthwise)):
            return None                   # a computed weight is not padded
        wdata = None
        if isinstance(w, X.Constant):
            wdata = _pad_axis(w.data, 0, o_pad)
            if not depthwise:
                wdata = _pad_axis(wdata, 1, c_pad)
        return self._blocked_conv(call, data, self._blocked_weight(w, klayout, wdata), ib, ob,
                                  klayout, o_pad if depthwise else a.groups)

    def _blocked_weight(self, w: X.Expr, klayout: str, wdata=None) -> X.Expr:
        """OIHW weight `w` in `klayout`: a constant's data (`wdata`, else its own) transformed
        now, anything else by a layout_transform."""
        if isinstance(w, X.Constant):
            return X.Constant(transform_numpy(w.data if wdata is None else wdata, "OIHW",
                                              klayout))
        return self.emit(R.layout_transform(self.visit_expr(w), "OIHW", klayout), "weight_c")

    def _blocked_conv(self, call: X.Call, data, weight, ib: int, ob: int, klayout: str,
                      groups: int):
        """(call's conv2d on blocked data and weight, its output block)."""
        a = call.attrs
        return R.nn.conv2d(data, weight, a.strides, a.padding, a.dilation, groups,
                           data_layout=blocked_layout(ib), kernel_layout=klayout,
                           out_layout=blocked_layout(ob), out_dtype=a.out_dtype), ob

    def _grouped_conv2d(self, call: X.Call, c: int, o: int):
        """A grouped conv2d whose groups are whole vectors (input and output channels per
        group multiples of the lanes: ResNeXt's wide stages) blocked in `lanes`-channel
        blocks, or whose groups are narrower than a vector (`_grouped_in_blocks`); else None
        (it stays NCHW)."""
        a = call.attrs
        x, w = call.args
        g, lanes = a.groups, self.lanes
        if c % g or o % g:
            return None
        if c == o and c // g < lanes and lanes % (c // g) == 0:
            return self._grouped_in_blocks(call, c, c // g)
        if (c // g) % lanes or (o // g) % lanes:
            return None
        data, ib = self._as_blocked(x, None, c, getattr(x, "name_hint", "x") + "_c")
        if (c // g) % ib or _channels(data, ib) != c:
            data, ib = self._as_blocked(x, lanes, c, getattr(x, "name_hint", "x") + "_c")
        klayout = f"OIHW{ib}i{lanes}o"
        return self._blocked_conv(call, data, self._blocked_weight(w, klayout), ib, lanes,
                                  klayout, g)

    def _grouped_in_blocks(self, call: X.Call, c: int, per_group: int):
        """A grouped conv2d with a constant weight, as many output channels as input and
        groups of `per_group` channels, a divisor of the lanes (RegNet's groups of 8,
        ResNeXt's of 4 and 8): in blocks of `lanes` channels, each holding lanes / per_group
        whole groups, weight OIHW[per_group]i[lanes]o (depthwise_conv2d_NCHWc's form).
        Channels padded to whole blocks (104 -> 112) form groups of zeros, with zero filters."""
        x, w = call.args
        if not isinstance(w, X.Constant):
            return None
        lanes = self.lanes
        data, ib = self._as_blocked(x, lanes, c, getattr(x, "name_hint", "x") + "_c")
        c_pad = _channels(data, ib)
        klayout = f"OIHW{per_group}i{lanes}o"
        weight = self._blocked_weight(w, klayout, _pad_axis(w.data, 0, c_pad))
        return self._blocked_conv(call, data, weight, lanes, lanes, klayout,
                                  c_pad // per_group)

    def _pool(self, call: X.Call):
        x = call.args[0]
        if not (isinstance(x, X.Var) and id(x) in self.blocked) or call.attrs.layout != "NCHW":
            return None
        if call.op.name in _ADAPTIVE and call.attrs.output_size not in ((1, 1), [1, 1]):
            return None
        bv, block = self.blocked[id(x)]
        layout = blocked_layout(block)
        attrs = call.attrs.with_values(layout=layout, out_layout=layout)
        return X.Call(call.op, (bv,), attrs), block

    def _elementwise(self, call: X.Call):
        nd = self.NDIM
        out = _static_f32(call, nd) if isinstance(call.struct_info, TensorStructInfo) else None
        tensors = [i for i, arg in enumerate(call.args)
                   if isinstance(arg.struct_info, TensorStructInfo)]
        blocked = [i for i in tensors if isinstance(call.args[i], X.Var)
                   and id(call.args[i]) in self.blocked]
        if out is None or not blocked:
            return None
        first, block = self.blocked[id(call.args[blocked[0]])]
        padded = _channels(first, block) != out[1]
        if padded and (call.op.name not in _PAD_SAFE or call.op.name == "relax.divide" and (
                len(call.args) != 2 or not isinstance(call.args[1], X.Constant))):
            return None
        fill = 1.0 if call.op.name == "relax.divide" else 0.0
        args = list(call.args)
        for i in tensors:
            arg = call.args[i]
            if i in blocked:
                bv, b = self.blocked[id(arg)]
                if b != block or not _broadcasts_per_channel(_static_f32(arg, nd), out):
                    return None
                args[i] = bv
            elif isinstance(arg, X.Constant):
                const = _block_constant(arg.data, out, block, fill, self.PLAIN)
                if const is None:
                    return None
                args[i] = const
            elif _static_f32(arg, nd) == out:
                args[i] = self._as_blocked(arg, block, out[1], getattr(arg, "name_hint", "v")
                                           + "_c")[0]
            else:
                return None
        return X.Call(call.op, tuple(args), call.attrs, call.sinfo_args), block

    def _concat(self, call: X.Call):
        """A concat along the channels of blocked values (others made blocked), each a whole
        number of the first blocked one's blocks: the blocked values concatenated along their
        channel-block axis."""
        fields = call.args[0].fields if isinstance(call.args[0], X.Tuple) else None
        if fields is None or call.attrs.axis not in (1, -4) or _static_f32(call, 4) is None:
            return None
        shapes = [_static_f32(f, 4) for f in fields]
        blocks = [self.blocked[id(f)][1] for f in fields
                  if isinstance(f, X.Var) and id(f) in self.blocked]
        if not blocks or any(s is None or s[1] % blocks[0] for s in shapes):
            return None
        block = blocks[0]
        parts = [self._as_blocked(f, block, s[1], getattr(f, "name_hint", "v") + "_c")[0]
                 for f, s in zip(fields, shapes)]
        return R.concat(parts, axis=1), block


def _broadcasts_per_channel(shape: Optional[tuple], out: tuple) -> bool:
    """Whether a value of NCHW (or NCDHW) `shape`, blocked as `out` is, broadcasts against it
    the same way in both layouts: the same shape, or [N, C, 1, 1] with out's N and C (a
    per-channel value of each image)."""
    return shape is not None and (shape == out or
                                  shape == (out[0], out[1]) + (1,) * (len(out) - 2))


def _block_constant(data: np.ndarray, out: tuple, block: int, fill: float = 0.0,
                    plain: str = "NCHW") -> Optional[X.Constant]:
    """A constant that broadcasts against `out` (in layout `plain`, NCHW or NCDHW) as one
    against plain[block]c: a scalar (any shape of ones) as it is, a per-channel one ([C, 1, 1]
    or [1, C, 1, 1]; for NCDHW a dim more) blocked, its padded channels (to a whole number of
    blocks) `fill`."""
    nd = len(out)
    if data.size == 1:
        return X.Constant(data) if data.ndim <= nd + 1 else None
    if data.ndim > nd:
        return None
    full = (1,) * (nd - data.ndim) + data.shape
    if full != (1, out[1]) + (1,) * (nd - 2):
        return None
    padded = _pad_axis(data.reshape(full), 1, -(-out[1] // block) * block, fill)
    return X.Constant(transform_numpy(padded, plain, blocked_layout(block, plain)))


def _channels(blocked: X.Expr, block: int) -> int:
    """The channel count (padding included) of a value in NCHW[block]c."""
    return int(blocked.struct_info.shape[1]) * block





def keep_nchw(func: X.Function) -> Set[int]:
    """Vars read outside the dataflow block that binds them (or by the function's result)."""
    keep: Set[int] = set()
    post_order_visit(func.body.body, lambda e: keep.add(id(e)) if isinstance(e, X.Var)
                     else None)
    for block in func.body.blocks:
        for b in block.bindings:
            if isinstance(block, X.DataflowBlock) and not isinstance(b.var, X.DataflowVar):
                keep.add(id(b.var))
    return keep


def is_gpu(target) -> bool:
    """Whether `target` (None: this host) runs kernels off the host."""
    if target is None:
        return False
    t = target if isinstance(target, Target) else Target(target)
    return not t.kind.is_host


def convert_module(mod: IRModule, target, convert=None) -> IRModule:
    """`mod` with each graph-level function rewritten by `convert` (a `_Convert` class; None:
    `_Convert`) for the CPU `target` (None: this host); the same module for a GPU target, a
    target without float32 vectors, or when nothing changed."""
    if is_gpu(target):
        return mod
    lanes = vector_isa(target).lanes("float32")
    if lanes < 2:
        return mod
    convert = convert or _Convert
    functions = {}
    changed = False
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            new = convert(lanes, keep_nchw(func)).visit_expr(func)
            changed = changed or new is not func
            func = new
        functions[name] = func
    return mod.with_functions(functions) if changed else mod


def convert_layout_nchwc(mod: IRModule, target=None) -> IRModule:
    """`mod` with its convolution regions in NCHW[x]c for the CPU `target` (None: this host);
    unchanged for a GPU target."""
    return convert_module(mod, target)
