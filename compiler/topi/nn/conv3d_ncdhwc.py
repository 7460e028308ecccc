"""3-d convolution in the blocked layout NCDHW[x]c: conv3d_NCDHWc (groups 1; nn.layout_transform
converts data and weights to these layouts).

Layouts (c: the channel block, a divisor of the channel count):
    data    NCDHW[c]c       [N, C / c, D, H, W, c]; (n, k, z, y, x) at [n, k / c, z, y, x, k % c]
    weight  OIDHW[i]i[o]o   [O / o, I / i, KD, KH, KW, i, o]; (f, k, rz, ry, rx) at
                            [f / o, k / i, rz, ry, rx, k % i, f % o]

The reduction is one compute tagged "conv3d_NCDHWc" whose output axes are (n, channel block,
z, y, x, channel in block) and whose reduce axes are (input-channel block, rz, ry, rx, channel
in block); the x86 schedule relies on both. Padding is an nn.pad stage ("injective,pad"),
absent without padding.
"""
from __future__ import annotations

import re

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ..utils import get_const_tuple
from .conv3d import _triple, get_pad_tuple3d
from .pad import pad
from .utils import conv_out_size

_BLOCKED = re.compile(r"^NCDHW(\d+)c$")
_BLOCKED_KERNEL = re.compile(r"^OIDHW(\d+)i(\d+)o$")


def channel_block3d(layout: str) -> int:
    """The channel block of a data layout "NCDHW16c" (16); IRError for another form."""
    m = _BLOCKED.match(layout)
    if not m:
        raise IRError(f"layout {layout!r} is not of the form NCDHW<block>c")
    return int(m.group(1))


def kernel_blocks3d(layout: str):
    """(input block, output block) of a weight layout "OIDHW16i16o"; IRError for another
    form."""
    m = _BLOCKED_KERNEL.match(layout)
    if not m:
        raise IRError(f"weight layout {layout!r} is not of the form OIDHW<i>i<o>o")
    return int(m.group(1)), int(m.group(2))


def conv3d_NCDHWc(data, kernel, stride, padding, dilation, out_dtype=None):
    """data [N, I / i, D, H, W, i], kernel [O / o, I / i, KD, KH, KW, i, o] ->
    [N, O / o, OD, OH, OW, o] (tag "conv3d_NCDHWc"). padding: int, (d, h, w) or (front, top,
    left, back, bottom, right); stride, dilation: int or (d, h, w)."""
    name = "conv3d_NCDHWc"
    if data.ndim != 6 or kernel.ndim != 7:
        raise IRError(f"{name}: data must be 6-d (NCDHW[x]c) and the kernel 7-d "
                      f"(OIDHW[x]i[y]o), got {data.ndim} and {kernel.ndim} dims")
    out_dtype = as_dtype(out_dtype or data.dtype)
    shapes = get_const_tuple(data.shape) + get_const_tuple(kernel.shape)
    if not all(isinstance(s, int) for s in shapes):
        raise IRError(f"{name}: needs static shapes, got {data.shape} and {kernel.shape}")
    n, dcb, d, h, w, dc = get_const_tuple(data.shape)
    ocb, icb, kd, kh, kw, ib, ob = get_const_tuple(kernel.shape)
    if (dcb, dc) != (icb, ib):
        raise IRError(f"{name}: the data has {dcb} channel blocks of {dc} but the kernel "
                      f"expects {icb} blocks of {ib}")
    sd, sh, sw = _triple(stride, "stride")
    dd, dh, dw = _triple(dilation, "dilation")
    pf, pt, pl, pk, pb, pr = get_pad_tuple3d(padding)
    od = conv_out_size(d, kd, sd, pf + pk, dd)
    oh = conv_out_size(h, kh, sh, pt + pb, dh)
    ow = conv_out_size(w, kw, sw, pl + pr, dw)
    if min(od, oh, ow) <= 0:
        raise IRError(f"{name}: the kernel ({kd}x{kh}x{kw}) does not fit the padded input")
    padded = data
    if (pf, pt, pl, pk, pb, pr) != (0,) * 6:
        padded = pad(data, (0, 0, pf, pt, pl, 0), (0, 0, pk, pb, pr, 0), name="pad_temp")
    rco = te.reduce_axis((0, icb), name="rco")
    rz = te.reduce_axis((0, kd), name="rz")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    rci = te.reduce_axis((0, ib), name="rci")

    def acc(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    def body(b, f, z, y, x, fi):
        return te.sum(acc(padded[b, rco, z * sd + rz * dd, y * sh + ry * dh, x * sw + rx * dw,
                                 rci]) * acc(kernel[f, rco, rz, ry, rx, rci, fi]),
                      axis=[rco, rz, ry, rx, rci])

    return te.compute((n, ocb, od, oh, ow, ob), body, name=name, tag=name)
