"""2-d convolution in NCHW: conv2d_nchw, group_conv2d_nchw, and conv2d (layout dispatch).

Every variant pads with nn.pad (a separate "injective,pad" stage, absent without padding) and
reduces in one compute tagged with its name, whose output axes are (n, channel, y, x):
schedules rely on that shape. The batch, height and width of the input may be symbolic (the
output's then are expressions of them); the filter and the channel counts must be static.
"""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError, UnsupportedOpError
from .pad import pad
from .utils import conv_out_size, data_shape, get_pad_tuple, pair


def _acc(v, dtype):
    return v if v.dtype == dtype else v.astype(dtype)


def _padded(data, pt, pl, pb, pr):
    if (pt, pl, pb, pr) == (0, 0, 0, 0):
        return data
    return pad(data, (0, 0, pt, pl), (0, 0, pb, pr), name="pad_temp")


def group_conv2d_nchw(Input, Filter, stride, padding, dilation, groups, out_dtype=None,
                      name="group_conv2d_nchw", tag="group_conv2d_nchw"):
    """Input [N, C, H, W], Filter [F, C / groups, KH, KW] -> [N, F, OH, OW]; output channel f
    reads input channels of group f // (F / groups)."""
    if Input.ndim != 4 or Filter.ndim != 4:
        raise IRError(f"{name}: input and filter must be 4-d (NCHW and OIHW)")
    out_dtype = as_dtype(out_dtype or Input.dtype)
    n, c, h, w = data_shape(Input, name, static_axes=(1,))
    f, cg, kh, kw = data_shape(Filter, name, static_axes=(0, 1, 2, 3))
    if groups < 1 or c % groups or f % groups:
        raise IRError(f"{name}: groups={groups} must divide the input channels ({c}) and the "
                      f"output channels ({f})")
    if cg * groups != c:
        raise IRError(f"{name}: the filter has {cg} input channels per group, but the input "
                      f"has {c} channels in {groups} groups ({c // groups} each)")
    sh, sw = pair(stride, "stride")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    oh = conv_out_size(h, kh, sh, pt + pb, dh)
    ow = conv_out_size(w, kw, sw, pl + pr, dw)
    data = _padded(Input, pt, pl, pb, pr)
    rc = te.reduce_axis((0, cg), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    fg = f // groups

    def body(b, ff, y, x):
        ch = rc if groups == 1 else (ff // fg) * cg + rc
        return te.sum(_acc(data[b, ch, y * sh + ry * dh, x * sw + rx * dw], out_dtype)
                      * _acc(Filter[ff, rc, ry, rx], out_dtype), axis=[rc, ry, rx])

    return te.compute((n, f, oh, ow), body, name=name, tag=tag)


def conv2d_nchw(Input, Filter, stride, padding, dilation, out_dtype=None):
    """Input [N, C, H, W], Filter [F, C, KH, KW] -> [N, F, OH, OW] (tag "conv2d_nchw").
    padding: int, (h, w) or (top, left, bottom, right); stride, dilation: int or (h, w)."""
    return group_conv2d_nchw(Input, Filter, stride, padding, dilation, 1, out_dtype,
                             name="conv2d_nchw", tag="conv2d_nchw")


def depthwise_conv2d_nchw(Input, Filter, stride, padding, dilation, out_dtype=None):
    """Input [N, C, H, W], Filter [C, M, KH, KW] -> [N, C * M, OH, OW]: output channel
    c * M + m convolves input channel c with Filter[c, m] (tag "depthwise_conv2d_nchw")."""
    if Input.ndim != 4 or Filter.ndim != 4:
        raise IRError("depthwise_conv2d_nchw: input and filter must be 4-d")
    out_dtype = as_dtype(out_dtype or Input.dtype)
    n, c, h, w = data_shape(Input, "depthwise_conv2d_nchw", static_axes=(1,))
    fc, m, kh, kw = data_shape(Filter, "depthwise_conv2d_nchw", static_axes=(0, 1, 2, 3))
    if fc != c:
        raise IRError(f"depthwise_conv2d_nchw: the filter is for {fc} channels but the input "
                      f"has {c}")
    sh, sw = pair(stride, "stride")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    oh = conv_out_size(h, kh, sh, pt + pb, dh)
    ow = conv_out_size(w, kw, sw, pl + pr, dw)
    data = _padded(Input, pt, pl, pb, pr)
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def body(b, ch, y, x):
        ic, mm = (ch, 0) if m == 1 else (ch // m, ch % m)
        return te.sum(_acc(data[b, ic, y * sh + ry * dh, x * sw + rx * dw], out_dtype)
                      * _acc(Filter[ic, mm, ry, rx], out_dtype), axis=[ry, rx])

    return te.compute((n, c * m, oh, ow), body, name="depthwise_conv2d_nchw",
                      tag="depthwise_conv2d_nchw")


def conv2d(input, filter, strides, padding, dilation, data_layout="NCHW", kernel_layout="",
           out_dtype=None):
    """conv2d in `data_layout` (NCHW only)."""
    if data_layout != "NCHW" or kernel_layout not in ("", "OIHW"):
        raise UnsupportedOpError(f"conv2d: layout {data_layout}/{kernel_layout or 'OIHW'} is not "
                                 "supported; use NCHW data and OIHW kernels")
    return conv2d_nchw(input, filter, strides, padding, dilation, out_dtype)
