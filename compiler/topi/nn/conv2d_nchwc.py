"""2-d convolution in the blocked layout NCHW[x]c: conv2d_NCHWc and depthwise_conv2d_NCHWc,
(nn.layout_transform converts data and weights to these layouts).

Layouts (c: the channel block, a divisor of the channel count):
    data    NCHW[c]c      [N, C / c, H, W, c]; (n, k, y, x) at [n, k / c, y, x, k % c]
    weight  OIHW[i]i[o]o  [O / o, I / i, KH, KW, i, o]; (f, k, ry, rx) at
                          [f / o, k / i, ry, rx, k % i, f % o]
    depthwise weight OIHW[g]i[o]o  [C / o, 1, KH, KW, g, o]  (groups of g channels within a
                          block, o = c; g = 1: depthwise, the multiplier is 1)

Each reduces in one compute tagged with its name whose output axes are (n, channel block, y,
x, channel in block); padding is an nn.pad stage ("injective,pad"), absent without padding.
"""
from __future__ import annotations

import re

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ..utils import get_const_tuple
from .pad import pad
from .utils import conv_out_size, get_pad_tuple, pair

_BLOCKED = re.compile(r"^NCHW(\d+)c$")
_BLOCKED_KERNEL = re.compile(r"^OIHW(\d+)i(\d+)o$")


def channel_block(layout: str) -> int:
    """The channel block of a data layout "NCHW8c" (8); IRError for another form."""
    m = _BLOCKED.match(layout)
    if not m:
        raise IRError(f"layout {layout!r} is not of the form NCHW<block>c")
    return int(m.group(1))


def kernel_blocks(layout: str):
    """(input block, output block) of a weight layout "OIHW8i8o"."""
    m = _BLOCKED_KERNEL.match(layout)
    if not m:
        raise IRError(f"weight layout {layout!r} is not of the form OIHW<i>i<o>o")
    return int(m.group(1)), int(m.group(2))


def _static(shape, what):
    out = get_const_tuple(shape)
    if not all(isinstance(s, int) for s in out):
        raise IRError(f"{what}: needs static shapes, got {[str(s) for s in shape]}")
    return out


def _acc(v, dtype):
    return v if v.dtype == dtype else v.astype(dtype)


def _padded(data, pt, pl, pb, pr):
    if (pt, pl, pb, pr) == (0, 0, 0, 0):
        return data
    return pad(data, (0, 0, pt, pl, 0), (0, 0, pb, pr, 0), name="pad_temp")


def _window(data, kh, kw, stride, padding, dilation, what):
    n, cb, h, w, c = _static(data.shape, what)
    sh, sw = pair(stride, "stride")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    oh = conv_out_size(h, kh, sh, pt + pb, dh)
    ow = conv_out_size(w, kw, sw, pl + pr, dw)
    if oh <= 0 or ow <= 0:
        raise IRError(f"{what}: the kernel ({kh}x{kw}) does not fit the padded input")
    return (n, cb, h, w, c), (sh, sw), (dh, dw), _padded(data, pt, pl, pb, pr), oh, ow


def conv2d_NCHWc(data, kernel, stride, padding, dilation, out_dtype=None, groups: int = 1):
    """data [N, I / i, H, W, i], kernel [O / o, I / i / groups, KH, KW, i, o] -> [N, O / o, OH,
    OW, o] (tag "conv2d_NCHWc"). padding: int, (h, w) or (top, left, bottom, right).
    groups > 1: a grouped convolution whose groups are whole blocks (I / groups a multiple of
    i, O / groups of o): output block f reads the input blocks of its group,
    f // (O / o / groups); the compute's attrs hold "groups"."""
    if data.ndim != 5 or kernel.ndim != 6:
        raise IRError("conv2d_NCHWc: data must be 5-d (NCHW[x]c) and the kernel 6-d "
                      f"(OIHW[x]i[y]o), got {data.ndim} and {kernel.ndim} dims")
    out_dtype = as_dtype(out_dtype or data.dtype)
    ocb, icb, kh, kw, ib, ob = _static(kernel.shape, "conv2d_NCHWc")
    (n, dcb, _, _, dc), (sh, sw), (dh, dw), padded, oh, ow = _window(
        data, kh, kw, stride, padding, dilation, "conv2d_NCHWc")
    if (dcb, dc) != (icb * groups, ib) or ocb % groups:
        raise IRError(f"conv2d_NCHWc: the data has {dcb} channel blocks of {dc} but the kernel "
                      f"expects {icb} blocks of {ib}" +
                      (f" in each of {groups} groups of {ocb // groups} output blocks"
                       if groups > 1 else ""))
    per_group = ocb // groups
    rco = te.reduce_axis((0, icb), name="rco")
    rci = te.reduce_axis((0, ib), name="rci")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def body(b, f, y, x, fi):
        c = rco if groups == 1 else f // per_group * icb + rco
        return te.sum(_acc(padded[b, c, y * sh + ry * dh, x * sw + rx * dw, rci], out_dtype)
                      * _acc(kernel[f, rco, ry, rx, rci, fi], out_dtype),
                      axis=[rco, ry, rx, rci])

    return te.compute((n, ocb, oh, ow, ob), body, name="conv2d_NCHWc", tag="conv2d_NCHWc",
                      attrs={"groups": groups} if groups > 1 else None)


def depthwise_conv2d_NCHWc(data, kernel, stride, padding, dilation, out_dtype=None):
    """data [N, C / c, H, W, c], kernel [C / c, 1, KH, KW, g, c] -> [N, C / c, OH, OW, c]
    (tag "depthwise_conv2d_NCHWc"): channels in groups of g (a divisor of c) inside each
    block, output channel k convolved with the g input channels of its group, those from
    k - k % g on; g = 1 is a depthwise convolution (each channel with its own filter), g > 1
    a grouped one whose groups are narrower than a block (RegNet's and ResNeXt's groups of
    8 or 4 channels in blocks of 16)."""
    if data.ndim != 5 or kernel.ndim != 6:
        raise IRError("depthwise_conv2d_NCHWc: data must be 5-d and the kernel 6-d "
                      "(OIHW[g]i[c]o)")
    out_dtype = as_dtype(out_dtype or data.dtype)
    kcb, one, kh, kw, g, kc = _static(kernel.shape, "depthwise_conv2d_NCHWc")
    (n, cb, _, _, c), (sh, sw), (dh, dw), padded, oh, ow = _window(
        data, kh, kw, stride, padding, dilation, "depthwise_conv2d_NCHWc")
    if (kcb, kc, one) != (cb, c, 1) or c % g:
        raise IRError(f"depthwise_conv2d_NCHWc: kernel {[kcb, one, kh, kw, g, kc]} does not "
                      f"match data with {cb} channel blocks of {c} (want [{cb}, 1, KH, KW, g, "
                      f"{c}] with g dividing {c})")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    if g == 1:
        def body(b, k, y, x, ki):
            return te.sum(_acc(padded[b, k, y * sh + ry * dh, x * sw + rx * dw, ki], out_dtype)
                          * _acc(kernel[k, 0, ry, rx, 0, ki], out_dtype), axis=[ry, rx])
    else:
        rg = te.reduce_axis((0, g), name="rg")
        if (sh, sw) == (1, 1):
            # every tap reads a pixel: its block once in g arrangements, the r-th putting in
            # lane l the r-th channel of l's group, so that the sum reads whole vectors
            hp, wp = (int(d) for d in padded.shape[2:4])
            grouped = te.compute((n, cb, hp, wp, g, c),
                                 lambda b, k, y, x, r, ki: padded[b, k, y, x, ki // g * g + r],
                                 name="grouped_input", tag="injective,group_input")

            def read(b, k, y, x, ki):
                return grouped[b, k, y, x, rg, ki]
        else:
            # strided: a pixel is read by few taps; its lanes are arranged at each read
            def read(b, k, y, x, ki):
                return padded[b, k, y, x, ki // g * g + rg]

        def body(b, k, y, x, ki):
            return te.sum(_acc(read(b, k, y * sh + ry * dh, x * sw + rx * dw, ki), out_dtype)
                          * _acc(kernel[k, 0, ry, rx, rg, ki], out_dtype), axis=[ry, rx, rg])

    return te.compute((n, cb, oh, ow, c), body, name="depthwise_conv2d_NCHWc",
                      tag="depthwise_conv2d_NCHWc")
