"""qnn_layout_nchwc: for a CPU target, integer convolutions run blocked (NCHW[x]c data, weights
in VNNI's 4-byte groups), their zero-point correction a constant.

before: quantize_to_integer and fold_constant ran (weights and zero points are constants).
after:  every relax.qnn.conv2d with groups 1, static shapes, constant int8/uint8 weights whose
        centered values w' = w - zw fit int8 (symmetric int8 weights; uint8 weights about 128),
        and a constant per-tensor data zero point zx is
            add(qnn.conv2d_NCHWc(x, pack(w')), -zu * sum(w'))       (int32 NCHW[ob]c)
        with zu = zx as uint8 (zx + 128 for int8 data, which the kernel shifts by +128), ob
        the largest of 16, 8, 4 dividing the output channels (else 16, the channels padded),
        the input channels padded with zero weights to a multiple of 4. The correction
        sum(w') per output channel is computed now. The blocked value stays blocked through
        what consumes it in that layout: elementwise and broadcast operators whose other
        tensor operands are blocked alike or constants that are scalars or per channel
        (blocked now; a qnn parameter of one value per channel along axis 1 too), max / avg
        pool2d, adaptive pools to (1, 1), and the next such convolution (data of a block
        divisible by 4); it is brought back to NCHW (a layout_transform, then a slice of the
        padded channels) once, where something else reads it. Integer results are the ones
        the NCHW kernels compute, bit for bit. For a GPU target nothing changes, nor for a
        Cortex-M target (topi.arm_cpu's kernels take NCHW; with the DSP extension, the SMLAD
        intrinsic of the llvm target is looked up in this process, as VNNI's below). When a
        convolution was blocked, the target's VNNI intrinsics are looked up in this process
        (qnn_vnni.register_intrinsics), so that its kernels lowered by forked workers compile.
        A depthwise relax.qnn.conv2d (groups = channels, one filter each) of the same kind
        is add(qnn.depthwise_conv2d_NCHWc(x, pack(w')), -zx * sum(w')) in the block of its
        blocked data (else 16, 8 or 4 dividing the channels, else 16 padded), and stays
        blocked alike. A grouped one whose channels per group (in and out) are whole blocks
        of 16, 8 or 4 (the block of its blocked data, else of its data brought back to NCHW)
        is a blocked one with `groups`. For an llvm target, every relax.qnn.matmul with
        static int8/uint8 data, a constant 2-D weight whose centered values w' = w - zw fit
        int8 and whose column count is a multiple of 4 is qnn.matmul_packed(a, pack(w'), za,
        sum(w') per column) (the weight in [K4/4, N, 4], K padded to 4), the same int32
        result: vpdpbusd where the target has VNNI, else the portable multiply-add (on
        mlp_tokens of bench/int8.py with -mcpu=haswell about 6x faster than the unpacked
        kernel; for the c target the unpacked kernel is faster, and stays).
"""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import numpy as np

from ...ir.module import IRModule
from ...target import Target
from ...topi.arm_cpu import dsp
from ...topi.nn.layout import transform_numpy
from ...topi.x86.qnn_vnni import register_intrinsics
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..op.pattern import BROADCAST, ELEMWISE, pattern_of_op
from ..struct_info import TensorStructInfo
from .convert_layout_nchwc import blocked_layout, is_gpu, keep_nchw

_POOLS = {"relax.nn.max_pool2d", "relax.nn.avg_pool2d"}
_ADAPTIVE = {"relax.nn.adaptive_avg_pool2d", "relax.nn.adaptive_max_pool2d"}
_QNN_PARAMS = {"relax.qnn.quantize", "relax.qnn.dequantize", "relax.qnn.requantize"}
# Output-channel blocks, best first (int32 lanes of one vpdpbusd).
OUT_BLOCKS = (16, 8, 4)
# Input-channel blocks (multiples of VNNI's group of 4), best first.
IN_BLOCKS = (16, 8, 4)


def _static(e: X.Expr, ndim: int) -> Optional[tuple]:
    s = e.struct_info
    if isinstance(s, TensorStructInfo) and s.ndim == ndim and s.is_static:
        return tuple(int(d) for d in s.shape)
    return None


def pack_weight(w: np.ndarray, ib: int, ob: int) -> np.ndarray:
    """OIHW int8 `w` as [OC/ob, IC/ib, KH, KW, ib/4, ob, 4], both channel counts padded with
    zeros to their blocks."""
    o, c, kh, kw = w.shape
    op, cp = -(-o // ob) * ob, -(-c // ib) * ib
    full = np.zeros((op, cp, kh, kw), np.int8)
    full[:o, :c] = w
    return full.reshape(op // ob, ob, cp // ib, ib // 4, 4, kh, kw).transpose(
        0, 2, 5, 6, 3, 1, 4).copy()


def pack_depthwise_weight(w: np.ndarray, block: int) -> np.ndarray:
    """[C, 1, KH, KW] int8 `w` (one filter per channel) as [C/block, KH, KW, block], the
    channels padded with zero filters to the block."""
    c, _, kh, kw = w.shape
    cp = -(-c // block) * block
    full = np.zeros((cp, kh, kw), np.int8)
    full[:c] = w[:, 0]
    return full.reshape(cp // block, block, kh, kw).transpose(0, 2, 3, 1).copy()


def pack_matmul_weight(w: np.ndarray):
    """(packed, weight_sum) of the centered [K, N] int8 weight `w` for
    qnn.matmul_packed: packed int8 [K4/4, N, 4] (packed[g, n, k] = w[4g + k, n], K padded
    with zero rows to K4, a multiple of 4) and int32 [N] column sums."""
    k, n = w.shape
    k4 = -(-k // 4) * 4
    full = np.zeros((k4, n), np.int8)
    full[:k] = w
    packed = full.reshape(k4 // 4, 4, n).transpose(0, 2, 1).copy()
    return packed, w.astype(np.int64).sum(axis=0).astype(np.int32)


def _block_of(n: int, blocks) -> Optional[int]:
    return next((b for b in blocks if n % b == 0), None)



def _centred_weight(call: X.Call) -> Optional[np.ndarray]:
    """The constant weight of integer convolution `call` less its zero points, as int64 [O, I,
    KH, KW], when the blocked kernels take the call: constant weight and zero points, one data
    zero point, int8/uint8 data, centred weights within int8. None otherwise."""
    x, w, zx, zw = call.args
    if (not isinstance(w, X.Constant) or not isinstance(zx, X.Constant)
            or not isinstance(zw, X.Constant) or zx.data.size != 1
            or x.struct_info.dtype not in ("int8", "uint8")):
        return None
    wc = w.data.astype(np.int64) - zw.data.astype(np.int64).reshape(-1, 1, 1, 1)
    return None if wc.min() < -128 or wc.max() > 127 else wc

class _Convert(ExprMutator):
    def __init__(self, keep: Set[int], pack_matmul: bool):
        super().__init__()
        self.keep = keep
        self.pack_matmul = pack_matmul
        # NCHW var -> (blocked var, block, channels)
        self.blocked: Dict[int, Tuple[X.Var, int, int]] = {}
        self.pending: Dict[int, X.Var] = {}
        self.nchw: Dict[int, X.Var] = {}

    def visit_var_(self, v: X.Var) -> X.Expr:
        if id(v) in self.pending:
            made = self.nchw.get(id(v))
            if made is None:
                bv, block, channels = self.blocked[id(v)]
                made = self.emit(R.layout_transform(bv, blocked_layout(block), "NCHW"),
                                 v.name_hint + "_nchw")
                if made.struct_info.shape[1] != channels:
                    made = self.emit(R.strided_slice(made, [1], [0], [channels]),
                                     v.name_hint + "_nchw")
                self.nchw[id(v)] = made
            return made
        return super().visit_var_(v)

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        v = b.value
        made = None
        if isinstance(v, X.Var) and id(v) in self.blocked:
            # An alias of a blocked value is blocked alike; unless it is read outside the
            # block (keep), its NCHW form too is made only where something reads it so.
            if id(v) not in self.pending:
                self.blocked[id(b.var)] = self.blocked[id(v)]
            elif id(b.var) not in self.keep:
                self.blocked[id(b.var)] = self.blocked[id(v)]
                self.pending[id(b.var)] = b.var
                return
            super().visit_var_binding_(b)
            return
        if isinstance(v, X.Call) and isinstance(v.op, X.Op):
            name = v.op.name
            packed = self._matmul(v) if name == "relax.qnn.matmul" and self.pack_matmul \
                else None
            if packed is not None:
                super().visit_var_binding_(X.VarBinding(b.var, packed))
                return
            if name == "relax.qnn.conv2d":
                made = self._conv2d(v)
            elif name in _POOLS or name in _ADAPTIVE:
                made = self._pool(v)
            elif pattern_of_op(name) in (ELEMWISE, BROADCAST):
                made = self._elementwise(v)
        if made is None:
            super().visit_var_binding_(b)
            return
        value, block, channels = made
        bv = value if isinstance(value, X.Var) else self.emit(value, b.var.name_hint + "_c")
        self.blocked[id(b.var)] = (bv, block, channels)
        if id(b.var) in self.keep:
            self.pending[id(b.var)] = b.var
            self._append(X.VarBinding(b.var, self.visit_var_(b.var)))
            del self.pending[id(b.var)]
        else:
            self.pending[id(b.var)] = b.var

    # ---- the convolution ----------------------------------------------------------------------
    def _conv2d(self, call: X.Call):
        a = call.attrs
        x, w, zx, zw = call.args
        xs, ws = _static(x, 4), _static(w, 4)
        if xs is not None and ws is not None and a.groups > 1 and a.groups == xs[1] == ws[0] \
                and ws[1] == 1:
            return self._depthwise(call, xs, ws)
        if a.groups > 1 and xs is not None and ws is not None:
            return self._grouped(call, xs, ws)
        wc = _centred_weight(call) if xs is not None and ws is not None and a.groups == 1 \
            else None
        if wc is None:
            return None
        c, o = xs[1], ws[0]
        ob = _block_of(o, OUT_BLOCKS) or OUT_BLOCKS[0]
        data, ib = None, None
        if isinstance(x, X.Var) and id(x) in self.blocked:
            bv, block, _ = self.blocked[id(x)]
            if block % 4 == 0:
                data, ib = bv, block
        if ib is None:      # NCHW data (made now, only when read so)
            data, ib = self.visit_expr(x), _block_of(-(-c // 4) * 4, IN_BLOCKS)
        zu = int(zx.data.reshape(())) + (128 if x.struct_info.dtype == "int8" else 0)
        packed = X.Constant(pack_weight(wc.astype(np.int8), ib, ob))
        acc = self.emit(R.qnn.conv2d_NCHWc(data, packed, int(zx.data.reshape(())), c,
                                           a.strides, a.padding, a.dilation), "acc_c")
        correction = np.zeros(-(-o // ob) * ob, np.int64)
        correction[:o] = -zu * wc.sum(axis=(1, 2, 3))
        const = correction.astype(np.int32).reshape(1, -1, 1, 1)
        return R.add(acc, X.Constant(transform_numpy(const, "NCHW", blocked_layout(ob)))), ob, o

    def _grouped(self, call: X.Call, xs, ws):
        """A grouped convolution whose groups are whole blocks of one size b (the block of
        blocked data, else the largest of 16, 8, 4 dividing the channels per group, in and
        out, from NCHW data)."""
        a = call.attrs
        x, w, zx, zw = call.args
        wc = _centred_weight(call)
        if wc is None:
            return None
        c, o, g = xs[1], ws[0], a.groups
        cg, og = c // g, o // g
        data, block = None, None
        if isinstance(x, X.Var) and id(x) in self.blocked:
            data, block, _ = self.blocked[id(x)]
            if cg % block or og % block:
                data, block = None, None        # NCHW data, in a block that fits
        if block is None:
            block = next((b for b in IN_BLOCKS if cg % b == 0 and og % b == 0), None)
            if block is None:
                return None
            data = self.visit_expr(x)
        zu = int(zx.data.reshape(())) + (128 if x.struct_info.dtype == "int8" else 0)
        packed = X.Constant(pack_weight(wc.astype(np.int8), block, block))
        acc = self.emit(R.qnn.conv2d_NCHWc(data, packed, int(zx.data.reshape(())), c,
                                           a.strides, a.padding, a.dilation, groups=g), "acc_c")
        const = (-zu * wc.sum(axis=(1, 2, 3))).astype(np.int32).reshape(1, -1, 1, 1)
        return R.add(acc, X.Constant(transform_numpy(const, "NCHW", blocked_layout(block)))), \
            block, o

    def _depthwise(self, call: X.Call, xs, ws):
        a = call.attrs
        x, w, zx, zw = call.args
        wc = _centred_weight(call)
        if wc is None:
            return None
        c = xs[1]
        block = None
        if isinstance(x, X.Var) and id(x) in self.blocked:
            data, block, _ = self.blocked[id(x)]
        if block is None:
            data, block = self.visit_expr(x), _block_of(c, OUT_BLOCKS) or OUT_BLOCKS[0]
        zv = int(zx.data.reshape(()))
        acc = self.emit(R.qnn.depthwise_conv2d_NCHWc(
            data, X.Constant(pack_depthwise_weight(wc.astype(np.int8), block)), zv, c,
            a.strides, a.padding, a.dilation), "acc_c")
        correction = np.zeros(-(-c // block) * block, np.int64)
        correction[:c] = -zv * wc.sum(axis=(1, 2, 3))
        const = correction.astype(np.int32).reshape(1, -1, 1, 1)
        return R.add(acc, X.Constant(transform_numpy(const, "NCHW", blocked_layout(block)))), \
            block, c

    # ---- the matmul by a constant weight (VNNI targets) ---------------------------------------
    def _matmul(self, call: X.Call) -> Optional[X.Call]:
        a, w, za, zw = call.args
        si = a.struct_info
        if (not isinstance(w, X.Constant) or not isinstance(zw, X.Constant) or w.data.ndim != 2
                or not isinstance(si, TensorStructInfo) or not si.is_static or si.ndim < 2
                or si.dtype not in ("int8", "uint8") or w.data.shape[1] % 4):
            return None
        wc = w.data.astype(np.int64) - zw.data.astype(np.int64).reshape(1, -1)
        if wc.min() < -128 or wc.max() > 127:
            return None
        packed, wsum = pack_matmul_weight(wc.astype(np.int8))
        return R.qnn.matmul_packed(a, X.Constant(packed), za, X.Constant(wsum))

    # ---- what follows it ----------------------------------------------------------------------
    def _pool(self, call: X.Call):
        x = call.args[0]
        if not (isinstance(x, X.Var) and id(x) in self.blocked) or call.attrs.layout != "NCHW":
            return None
        if call.op.name in _ADAPTIVE and call.attrs.output_size not in ((1, 1), [1, 1]):
            return None
        bv, block, channels = self.blocked[id(x)]
        if block * bv.struct_info.shape[1] != channels:
            return None       # padded channels would change no result but the shape
        layout = blocked_layout(block)
        attrs = call.attrs.with_values(layout=layout, out_layout=layout)
        return X.Call(call.op, (bv,), attrs), block, channels

    def _elementwise(self, call: X.Call):
        if not isinstance(call.struct_info, TensorStructInfo):
            return None
        out = _static(call, 4)
        tensors = [i for i, arg in enumerate(call.args)
                   if isinstance(arg.struct_info, TensorStructInfo)]
        blocked = [i for i in tensors if isinstance(call.args[i], X.Var)
                   and id(call.args[i]) in self.blocked]
        if out is None or not blocked:
            return None
        _, block, channels = self.blocked[id(call.args[blocked[0]])]
        qnn = call.op.name in _QNN_PARAMS
        if qnn and blocked != [0]:
            return None
        args = list(call.args)
        for i in tensors:
            arg = call.args[i]
            if i in blocked:
                bv, b, ch = self.blocked[id(arg)]
                if b != block or ch != channels or _static(arg, 4) != out:
                    return None
                args[i] = bv
            elif isinstance(arg, X.Constant):
                data = arg.data
                if qnn and data.ndim == 1 and data.size == channels and call.attrs.axis == 1:
                    data = data.reshape(1, -1, 1, 1)
                elif qnn and data.size != 1:
                    return None
                const = _block_constant(data, channels, block)
                if const is None:
                    return None
                args[i] = const
            else:
                return None
        return X.Call(call.op, tuple(args), call.attrs, call.sinfo_args), block, channels


def _block_constant(data: np.ndarray, channels: int, block: int) -> Optional[X.Constant]:
    """A constant that broadcasts against NCHW data of `channels` as one against NCHW[block]c
    (channels padded to the block, with the last channel's value): a scalar as it is, a
    per-channel one ([C, 1, 1] or [1, C, 1, 1]) blocked."""
    if data.size == 1:
        return X.Constant(data) if data.ndim <= 5 else None
    if data.ndim > 4:
        return None
    full = (1,) * (4 - data.ndim) + data.shape
    if full != (1, channels, 1, 1):
        return None
    padded = -(-channels // block) * block
    values = data.reshape(-1)
    values = np.concatenate([values, np.repeat(values[-1:], padded - channels)])
    return X.Constant(transform_numpy(values.reshape(1, -1, 1, 1), "NCHW", blocked_layout(block)))


def qnn_layout_nchwc(mod: IRModule, target=None) -> IRModule:
    """`mod` with its integer convolutions blocked for the CPU `target` (None: this host);
    unchanged for a GPU or a Cortex-M target."""
    if is_gpu(target):
        return mod
    if dsp.is_cortex_m(target):
        if dsp.has_dsp(target):
            dsp.register_intrinsics()
        return mod
    functions = {}
    changed = False
    t = Target(target) if isinstance(target, str) else (target or Target.current())
    pack_matmul = t is None or t.kind.name == "llvm"
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            new = _Convert(keep_nchw(func), pack_matmul).visit_expr(func)
            changed = changed or new is not func
            func = new
        functions[name] = func
    if not changed:
        return mod
    register_intrinsics(target)
    return mod.with_functions(functions)
