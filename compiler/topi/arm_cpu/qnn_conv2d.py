"""The integer convolution on Cortex-M with the DSP extension: 16-bit pairs and SMLAD.

The reduction runs over int32 words that each hold two 16-bit values, word k being (kernel
row ky, kernel column kx, input channel pair c2) in that order:

    col[n, y, x, k] = pack16(x'(2 c2), x'(2 c2 + 1))     x' = int32(data) - zx (the data
                                                         padded with zx: x' = 0 there)
    wp[o, k]        = pack16(w'(2 c2), w'(2 c2 + 1))     w' = int32(weight) - zw
    out[n, o, y, x] = sum over k of dot2(col[n, y, x, k], wp[o, k])

with the input channels padded to an even count (a zero pair member). x' and w' fit in 16 bits
(int8 or uint8 less a zero point of the same type), so the zero points are subtracted before
the products and no correction term follows; the padding holds x' = 0. `dot2(a, b)` is what one
SMLAD adds (dsp.py): the schedule replaces each step of the reduction by SMLAD, computing
`oc_tile` output channels from one loaded column word. The column words of one output pixel
(KH * KW * C/2 words) are made once, where the pixel's output channels are computed; the
padded data and the packed weights (OC * KH * KW * C/2 words) once per call, at the root. The
result is the int32 sum of the NCHW kernel (topi.nn.qnn.qnn_conv2d_nchw), bit for bit.
"""
from __future__ import annotations

from ... import te, tir
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ...tir import expr as E
from ...tir.stmt import seq
from ..nn.pad import pad
from ..nn.qnn import qnn_param
from ..nn.utils import get_pad_tuple, pair
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from ..x86.anchored import accumulator_stages, schedule_anchored
from .dsp import dot2, has_dsp, pack16, smlad
from .mve import WORDS as MVE_WORDS
from .mve import dot16, has_mve

TAG = "qnn_conv2d_nchw_smlad"
# Output channels computed from one column word, at most (their accumulators stay in registers).
OC_TILE = 4
# Output pixels of a row computed together, at most (each weight word loaded once for them).
PX_TILE = 2
# Column words per step of the reduction loop, at most.
K_UNROLL = 2


def qnn_conv2d_nchw_smlad(data, weight, data_zero_point, weight_zero_point, strides, padding,
                          dilation, word_multiple: int = 1):
    """int32 sum((data - zx) * (weight - zw)) of NCHW int8/uint8 `data` by OIHW int8/uint8
    `weight` (groups 1) over 16-bit pairs (module docstring). zx: a number or a 0-d tensor;
    zw: a number, a 0-d tensor or one per output channel. `word_multiple`: the words of a
    column and of a weight row padded with zero words to a multiple of it (4 for MVE: eight
    16-bit lanes per step)."""
    for t, what in ((data, "data"), (weight, "weight")):
        if str(t.dtype) not in ("int8", "uint8"):
            raise IRError(f"qnn_conv2d_nchw_smlad: the {what} is {t.dtype}; int8 or uint8 "
                          "expected")
    n, c, h, w = get_const_tuple(data.shape)
    oc, wc, kh, kw = get_const_tuple(weight.shape)
    if wc != c:
        raise IRError(f"qnn_conv2d_nchw_smlad: weight {weight.shape} does not take the data's "
                      f"{c} channels (groups 1 only)")
    sh, sw = pair(strides, "strides")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pl + pr - (kw - 1) * dw - 1) // sw + 1
    c2 = (c + 1) // 2
    i32 = as_dtype("int32")
    zero = E.make_const(i32, 0)

    if pt or pl or pb or pr:
        # the padding holds zx (x' = 0 there): one stage per call, no bounds tests per word
        zx = data_zero_point() if isinstance(data_zero_point, te.Tensor) else data_zero_point
        data = pad(data, (0, 0, pt, pl), (0, 0, pb, pr), pad_value=zx, name="pad_temp")

    def x_centered(b, ch, iy, ix):
        v = E.cast(i32, data[b, ch, iy, ix]) - qnn_param(data_zero_point, (b, ch, iy, ix), 1,
                                                      "int32")
        return te.if_then_else(ch < c, v, zero) if c % 2 else v

    def w_centered(o, ch, ry, rx):
        v = E.cast(i32, weight[o, ch, ry, rx]) - qnn_param(weight_zero_point, (o, ch, ry, rx), 0,
                                                        "int32")
        return te.if_then_else(ch < c, v, zero) if c % 2 else v

    def split_k(k):
        """(kernel row, kernel column, channel pair) of word k."""
        return k // (kw * c2), k // c2 % kw, k % c2

    words = kh * kw * c2
    padded = -(-words // word_multiple) * word_multiple
    last = E.make_const(i32, words - 1)

    def in_words(k, value):
        """`value`, or a zero word past the last real one (k clamped so no load strays)."""
        return value if padded == words else te.if_then_else(k < words, value, zero)

    def col_word(b, y, x, k):
        ry, rx, p = split_k(E.Min(k, last) if padded != words else k)
        iy, ix = y * sh + ry * dh, x * sw + rx * dw
        return in_words(k, pack16(x_centered(b, 2 * p, iy, ix),
                                  x_centered(b, 2 * p + 1, iy, ix)))

    def weight_word(o, k):
        ry, rx, p = split_k(E.Min(k, last) if padded != words else k)
        return in_words(k, pack16(w_centered(o, 2 * p, ry, rx),
                                  w_centered(o, 2 * p + 1, ry, rx)))

    col = te.compute((n, oh, ow, padded), col_word, name="T_col16", tag="im2col16")
    wp = te.compute((oc, padded), weight_word, name="T_weight16", tag="weight16")
    rk = te.reduce_axis((0, padded), name="rk")
    return te.compute((n, oc, oh, ow), lambda b, o, y, x: te.sum(
        dot2(col[b, y, x, rk], wp[o, rk]), axis=rk), name="conv2d_nchw_smlad", tag=TAG)


def smlad_tile(oc_tile: int, target, px_tile: int = 1):
    """The tensor intrinsic out[i, 0, j] += dot2(col[j, 0], wp[i, 0]), i < oc_tile,
    j < px_tile: the column words of `px_tile` output pixels (a column apart) by `oc_tile`
    weight words (a row of the packed weights apart), one SMLAD each, each weight word loaded
    once (out: `px_tile` pixels of one row by `oc_tile` NCHW channels)."""
    col = te.placeholder((px_tile, 1), dtype="int32", name="col")
    wp = te.placeholder((oc_tile, 1), dtype="int32", name="wp")
    k = te.reduce_axis((0, 1), name="k")
    out = te.compute((oc_tile, 1, px_tile), lambda i, y, x: te.sum(
        dot2(col[x, k], wp[i, k]), axis=k), name="out")
    a_buf = tir.decl_buffer(col.shape, "int32", name="a", offset_factor=1,
                            strides=[te.var("ldp"), 1])
    b_buf = tir.decl_buffer(wp.shape, "int32", name="b", offset_factor=1,
                            strides=[te.var("ldw"), 1])
    c_buf = tir.decl_buffer(out.shape, "int32", name="c", offset_factor=1,
                            strides=[te.var("ldc"), te.var("ldy"), te.var("ldx")])
    tiles = [(i, j) for i in range(oc_tile) for j in range(px_tile)]

    def intrin(ins, outs):
        at = {(i, j): [tir.const(i), tir.const(0), tir.const(j)] for i, j in tiles}

        def update(first: bool):
            cols = [ins[0].vload([j, 0], "int32") for j in range(px_tile)]
            weights = [ins[1].vload([i, 0], "int32") for i in range(oc_tile)]
            return seq(*[tir.BufferStore(outs[0], smlad(
                cols[j], weights[i],
                tir.const(0, "int32") if first else outs[0].vload(at[i, j], "int32"), target),
                at[i, j]) for i, j in tiles])

        # the accumulators cleared before the reduction loops, so no step tests for the first
        reset = seq(*[tir.BufferStore(outs[0], tir.const(0, "int32"), at[t]) for t in tiles])
        return update(True), reset, update(False)

    return te.decl_tensor_intrin(out.op, intrin, name=f"smlad_{oc_tile}x{px_tile}",
                                 binds={col: a_buf, wp: b_buf, out: c_buf})


def mve_tile(oc_tile: int, px_tile: int = 1):
    """The tensor intrinsic out[i, 0, j] += sum over k < 4 of dot2(col[j, k], wp[i, k]),
    i < oc_tile, j < px_tile: four column words (eight 16-bit values) of each of `px_tile`
    output pixels by four weight words of each of `oc_tile` output channels, one
    `kiln_mve_dot16` (VMLADAVA.S16) each (mve.py; out as in smlad_tile)."""
    col = te.placeholder((px_tile, MVE_WORDS), dtype="int32", name="col")
    wp = te.placeholder((oc_tile, MVE_WORDS), dtype="int32", name="wp")
    k = te.reduce_axis((0, MVE_WORDS), name="k")
    out = te.compute((oc_tile, 1, px_tile), lambda i, y, x: te.sum(
        dot2(col[x, k], wp[i, k]), axis=k), name="out")
    a_buf = tir.decl_buffer(col.shape, "int32", name="a", offset_factor=1,
                            strides=[te.var("ldp"), 1])
    b_buf = tir.decl_buffer(wp.shape, "int32", name="b", offset_factor=1,
                            strides=[te.var("ldw"), 1])
    c_buf = tir.decl_buffer(out.shape, "int32", name="c", offset_factor=1,
                            strides=[te.var("ldc"), te.var("ldy"), te.var("ldx")])
    tiles = [(i, j) for i in range(oc_tile) for j in range(px_tile)]

    def intrin(ins, outs):
        at = {(i, j): [tir.const(i), tir.const(0), tir.const(j)] for i, j in tiles}
        cols = [ins[0].access_ptr("r", offset=j * ins[0].strides[0]) for j in range(px_tile)]
        weights = [ins[1].access_ptr("r", offset=i * ins[1].strides[0]) for i in range(oc_tile)]

        def update(first: bool):
            return seq(*[tir.BufferStore(outs[0], dot16(
                tir.const(0, "int32") if first else outs[0].vload(at[i, j], "int32"),
                cols[j], weights[i]), at[i, j]) for i, j in tiles])

        reset = seq(*[tir.BufferStore(outs[0], tir.const(0, "int32"), at[t]) for t in tiles])
        return update(True), reset, update(False)

    return te.decl_tensor_intrin(out.op, intrin, name=f"mve_{oc_tile}x{px_tile}",
                                 binds={col: a_buf, wp: b_buf, out: c_buf})


def _stage_of(anchor, tag_name):
    return next(t.op for t in anchor.input_tensors if t.op.tag == tag_name)


def schedule_qnn_conv2d_nchw_smlad(outs, target, oc_tile: int = OC_TILE,
                                   px_tile: int = PX_TILE):
    """Schedule qnn_conv2d_nchw_smlad and what was fused after it (bias, requantize, the clamp
    of a relu) for `target`: per `px_tile` output pixels of a row (a divisor of the row's
    length), their column words, then `oc_tile` output channels at a time (a divisor of the
    channel count), each step of the reduction one SMLAD per channel and pixel, each column and
    weight word loaded once (on a target without the DSP extension, dot2 in plain arithmetic
    in its place, one pixel at a time); the epilogue applied as each tile is written. On a
    target with MVE (mve.has_mve: the compute made with word_multiple 4), each step of the
    reduction is four words, one VMLADAVA.S16 per channel and pixel (mve_tile)."""
    smlad_ok = has_dsp(target)
    mve_ok = has_mve(target)

    def tile(s, anchor, out_op):
        acc, o = accumulator_stages(s, anchor, out_op)
        n, f, y, x = o.op.axis
        nn, oc, oh, ow = get_const_tuple(anchor.output(0).shape)
        ft = divisor_at_most(oc, oc_tile)
        # without SMLAD, twice the accumulators and the halves' extraction spill registers
        xt = divisor_at_most(ow, px_tile if smlad_ok else 1)
        fo, fi = o.split(f, factor=ft)
        xo, xi = o.split(x, factor=xt)
        o.reorder(n, y, xo, fo, fi, xi)
        o.unroll(fi)
        o.unroll(xi)
        col = _stage_of(anchor, "im2col16")
        s[col].compute_at(o, xo)
        a = s[acc]
        a.compute_at(o, fo)
        an, af, ay, ax = a.op.axis
        rk, = a.op.reduce_axis
        words = get_const_tuple(col.output(0).shape)[3]
        lanes = MVE_WORDS if mve_ok and words % MVE_WORDS == 0 else 1
        rko, rki = a.split(rk, factor=lanes)
        # two steps per loop step (where the count is even): half the loop's overhead
        step = divisor_at_most(words // lanes, K_UNROLL)
        rkoo, rkoi = a.split(rko, factor=step)
        a.reorder(an, ay, rkoo, rkoi, af, ax, rki)
        a.unroll(rkoi)
        # Loops of one iteration around the tensorized stage are marked unrolled (as in the
        # x86 VNNI schedule): as serial loops they would be dropped before the intrinsic's
        # buffer views are flattened, leaving those views indexed by the dropped loop's variable.
        for stage, axis, extent in ((o, n, nn), (o, y, oh), (o, xo, ow // xt),
                                    (o, fo, oc // ft)):
            if extent == 1:
                stage.unroll(axis)
        for axis in (an, ay):
            a.unroll(axis)
        if words == step * lanes:
            a.unroll(rkoo)
        if lanes > 1:
            a.tensorize(af, mve_tile(ft, xt))
        elif smlad_ok:
            a.tensorize(af, smlad_tile(ft, target, xt))
        else:
            a.unroll(af)
            a.unroll(ax)
            a.unroll(rki)
        # The packing stages loop over (kernel row, column, channel pair), so their word
        # index needs no division.
        wp = _stage_of(anchor, "weight16")
        weight = next(t for t in wp.input_tensors if t.ndim == 4)
        _, c, _, kw = get_const_tuple(weight.shape)
        for stage in (s[col], s[wp]):
            rows_cols, _ = stage.split(stage.op.axis[-1], factor=(c + 1) // 2)
            stage.split(rows_cols, factor=kw)

    return schedule_anchored(as_outputs(outs), lambda t: t == TAG, tile)


GROUP_TAG = "group_conv2d_nchw"


def schedule_qnn_group_conv2d_nchw(outs):
    """Schedule topi.nn.qnn.qnn_conv2d_nchw of groups > 1 (a depthwise convolution among them)
    and what was fused after it, for a single-issue core: the zero-point padding a stage at the
    root, then per output pixel the int32 sum over the group's channels and the kernel window
    (window unrolled), the correction, bias and requantize applied at once. The weight-sum
    stage of the correction runs once per call at the root."""

    def tile(s, anchor, out_op):
        acc, o = accumulator_stages(s, anchor, out_op)
        a = s[acc]
        a.compute_at(o, o.op.axis[3])
        _, _, kh, kw = get_const_tuple(anchor.input_tensors[1].shape)
        rc, ry, rx = a.op.reduce_axis
        if kh * kw <= 25:
            a.unroll(ry)
            a.unroll(rx)
        for axis in a.op.axis:
            a.unroll(axis)

    return schedule_anchored(as_outputs(outs), lambda t: t == GROUP_TAG, tile, keep_pad=True)


__all__ = ["OC_TILE", "PX_TILE", "mve_tile", "qnn_conv2d_nchw_smlad",
           "schedule_qnn_conv2d_nchw_smlad", "schedule_qnn_group_conv2d_nchw", "smlad_tile"]
