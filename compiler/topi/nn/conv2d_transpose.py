"""conv2d_transpose_nchw: the gradient of conv2d with respect to its input, computed as a
convolution of the stride-dilated, padded input with the flipped kernel."""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ...tir import expr as E
from .. import tag as _tag
from .conv2d import _acc
from .utils import data_shape, get_pad_tuple, pair


def conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype=None, output_padding=(0, 0)):
    """Input [N, C, H, W], Filter [C, F, KH, KW] -> [N, F, OH, OW] with
    OH = (H - 1) * stride - pad_top - pad_bottom + KH + output_padding (same for W). The batch
    may be symbolic."""
    if Input.ndim != 4 or Filter.ndim != 4:
        raise IRError("conv2d_transpose_nchw: input and filter must be 4-d")
    out_dtype = as_dtype(out_dtype or Input.dtype)
    n, c, h, w = data_shape(Input, "conv2d_transpose_nchw", static_axes=(1, 2, 3))
    fc, f, kh, kw = data_shape(Filter, "conv2d_transpose_nchw", static_axes=(0, 1, 2, 3))
    if fc != c:
        raise IRError(f"conv2d_transpose_nchw: the filter [in, out, kh, kw] is for {fc} input "
                      f"channels but the input has {c}")
    sh, sw = pair(strides, "strides")
    oph, opw = pair(output_padding, "output_padding")
    if oph >= sh or opw >= sw:
        raise IRError(f"conv2d_transpose_nchw: output_padding {(oph, opw)} must be smaller "
                      f"than the strides {(sh, sw)}")
    pt, pl, pb, pr = get_pad_tuple(padding, (kh, kw))
    oh = (h - 1) * sh - pt - pb + kh + oph
    ow = (w - 1) * sw - pl - pr + kw + opw
    if oh < 1 or ow < 1:
        raise IRError(f"conv2d_transpose_nchw: padding {padding} leaves no output")
    top, left = kh - 1 - pt, kw - 1 - pl
    dil_h, dil_w = (h - 1) * sh + 1, (w - 1) * sw + 1

    def dilate_pad(b, ch, y, x):
        yy, xx = y - top, x - left
        conds = [yy >= 0, yy < dil_h, xx >= 0, xx < dil_w]
        if sh > 1:
            conds.append(E.binary(E.EQ, te.floormod(yy, sh), 0))
        if sw > 1:
            conds.append(E.binary(E.EQ, te.floormod(xx, sw), 0))
        src = Input[b, ch, te.floordiv(yy, sh) if sh > 1 else yy,
                    te.floordiv(xx, sw) if sw > 1 else xx]
        return te.if_then_else(te.all(*conds), src, E.make_const(Input.dtype, 0))

    data = te.compute((n, c, oh + kh - 1, ow + kw - 1), dilate_pad, name="data_pad",
                      tag=_tag.INJECTIVE + ",pad")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    return te.compute(
        (n, f, oh, ow),
        lambda b, ff, y, x: te.sum(_acc(data[b, rc, y + ry, x + rx], out_dtype)
                                   * _acc(Filter[rc, ff, kh - 1 - ry, kw - 1 - rx], out_dtype),
                                   axis=[rc, ry, rx]),
        name="conv2d_transpose_nchw", tag="conv2d_transpose_nchw")
