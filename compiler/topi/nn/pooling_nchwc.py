"""Pooling in the blocked layout NCHW[x]c ([N, C / c, H, W, c]): pool2d_NCHWc (max / avg with
padding, dilation, ceil_mode, count_include_pad, as nn.pool2d) and global_pool_NCHWc.

Max pools are one reduction tagged "pool_max"; average pools a sum ("pool_sum") then an
elementwise divide, as in NCHW, so the same anchors are found by schedules.
"""
from __future__ import annotations

from ... import te
from ...ir.errors import IRError
from .. import tag as _tag
from ..utils import get_const_tuple
from .pad import pad
from .pooling import _pool_out, _window_count
from .utils import get_pad_tuple, pair


def _shape(data, what):
    if data.ndim != 5:
        raise IRError(f"{what}: the input must be 5-d NCHW[x]c, got {data.ndim} dimensions")
    shape = get_const_tuple(data.shape)
    if not all(isinstance(s, int) for s in shape):
        raise IRError(f"{what}: needs a static input shape")
    return shape


def pool2d_NCHWc(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False,
                 count_include_pad=True):
    """Max or average pooling of [N, C / c, H, W, c] data over windows of `kernel` (h, w);
    the arguments as nn.pool2d's."""
    n, cb, h, w, c = _shape(data, "pool2d_NCHWc")
    if pool_type not in ("max", "avg"):
        raise IRError(f"pool2d_NCHWc: pool_type '{pool_type}' is not 'max' or 'avg'")
    kh, kw = pair(kernel, "kernel")
    sh, sw = pair(stride, "stride")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, (kh, kw))
    oh = _pool_out(h, kh, sh, dh, pt, pb, ceil_mode)
    ow = _pool_out(w, kw, sw, dw, pl, pr, ceil_mode)
    eb = max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - (h + pt + pb))
    er = max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - (w + pl + pr))
    fill = te.min_value(data.dtype) if pool_type == "max" else 0.0
    padded = data
    if (pt, pl, pb + eb, pr + er) != (0, 0, 0, 0):
        padded = pad(data, (0, 0, pt, pl, 0), (0, 0, pb + eb, pr + er, 0), pad_value=fill,
                     name="pad_temp")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def window(b, k, y, x, i):
        return padded[b, k, y * sh + ry * dh, x * sw + rx * dw, i]

    shape = (n, cb, oh, ow, c)
    if pool_type == "max":
        return te.compute(shape, lambda *i: te.max(window(*i), axis=[ry, rx]), name="pool_max",
                          tag="pool_max")
    total = te.compute(shape, lambda *i: te.sum(window(*i), axis=[ry, rx]), name="pool_sum",
                       tag="pool_sum")
    lo_h, hi_h = (-pt, h + pb) if count_include_pad else (0, h)
    lo_w, hi_w = (-pl, w + pr) if count_include_pad else (0, w)

    def avg(b, k, y, x, i):
        cnt = _window_count(y * sh - pt, kh, dh, lo_h, hi_h) * \
            _window_count(x * sw - pl, kw, dw, lo_w, hi_w)
        return total[b, k, y, x, i] / cnt.astype(data.dtype)

    return te.compute(shape, avg, name="pool_avg", tag=_tag.ELEMWISE)


def global_pool_NCHWc(data, pool_type):
    """Max or average over the whole H x W plane: [N, C / c, H, W, c] -> [N, C / c, 1, 1, c]."""
    n, cb, h, w, c = _shape(data, "global_pool_NCHWc")
    ry = te.reduce_axis((0, h), name="ry")
    rx = te.reduce_axis((0, w), name="rx")
    shape = (n, cb, 1, 1, c)
    if pool_type == "max":
        return te.compute(shape, lambda b, k, y, x, i: te.max(data[b, k, ry, rx, i],
                                                              axis=[ry, rx]),
                          name="adaptive_pool_max", tag="adaptive_pool_max")
    if pool_type != "avg":
        raise IRError(f"global_pool_NCHWc: pool_type '{pool_type}' is not 'max' or 'avg'")
    total = te.compute(shape, lambda b, k, y, x, i: te.sum(data[b, k, ry, rx, i], axis=[ry, rx]),
                       name="adaptive_pool_sum", tag="adaptive_pool_sum")
    return te.compute(shape, lambda *i: total(*i) / float(h * w), name="adaptive_pool_avg",
                      tag=_tag.ELEMWISE)
