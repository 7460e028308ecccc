"""Pooling in NCHW: pool2d (max / avg, padding, dilation, ceil_mode, count_include_pad),
global_pool and adaptive_pool; in NCDHW: pool3d and adaptive_pool3d.

Max pools are one reduction tagged "pool_max" / "adaptive_pool_max". Average pools are a sum
("pool_sum" / "adaptive_pool_sum") followed by an elementwise divide named "pool_avg" /
"adaptive_pool_avg"; schedules find the reduction as the anchor. Every dim of the input may
be symbolic: the output sizes are then expressions of it (a global pool reduces over the whole
symbolic plane; an adaptive pool's window loops run to their largest size, masked).
"""
from __future__ import annotations

from ... import te
from ...ir.errors import IRError, UnsupportedOpError
from ...tir import expr as E
from .. import tag as _tag
from ..utils import simplify
from .pad import pad
from .utils import data_shape, get_pad_tuple, pair


def _check(data, layout, what, expected="NCHW"):
    """The input's dims, after checking it is in the `expected` layout (NCHW, NCDHW)."""
    if layout != expected:
        raise UnsupportedOpError(f"{what}: layout {layout} is not supported; use {expected}")
    if data.ndim != len(expected):
        raise IRError(f"{what}: the input must be {len(expected)}-d {expected}, got "
                      f"{data.ndim} dimensions")
    return data_shape(data, what)


def _ceildiv(a, d):
    return te.floordiv(a + (d - 1), d) if d > 1 else a


def _max(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return simplify(E.binary(E.Max, a, b))


def _min(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return simplify(E.binary(E.Min, a, b))


def _window_count(start, k, d, lo, hi):
    """How many of start, start + d, ..., start + (k - 1) d lie in [lo, hi)."""
    first = E.binary(E.Max, _ceildiv(lo - start, d), 0)
    last = E.binary(E.Min, _ceildiv(hi - start, d), k)
    return E.binary(E.Max, last - first, 1)


def _pool_out(size, k, s, d, p0, p1, ceil_mode):
    """The output size along one axis; for a symbolic `size` an expression (the windows must
    fit the input at run time)."""
    span = size + p0 + p1 - d * (k - 1) - 1
    if not isinstance(size, int):
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode:  # the last window must start inside the input or the leading padding
            out = E.binary(E.Min, out, (size + p0 - 1) // s + 1)
        return simplify(out)
    if span < 0:
        raise IRError(f"pool2d: the window ({k}, dilation {d}) is larger than the padded input "
                      f"({size} + {p0 + p1})")
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p0:
        out -= 1  # the last window must start inside the input or the leading padding
    return out


def pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False, layout="NCHW",
           count_include_pad=True):
    """Max or average pooling over windows of `kernel` (h, w). padding: int, (h, w) or
    (top, left, bottom, right). With ceil_mode the output rounds up; windows that run past
    the padding only count the elements they cover. The batch, channels, height and width may
    be symbolic (the output's then are expressions of them)."""
    n, c, h, w = _check(data, layout, "pool2d")
    if pool_type not in ("max", "avg"):
        raise IRError(f"pool2d: pool_type '{pool_type}' is not 'max' or 'avg'")
    kh, kw = pair(kernel, "kernel")
    sh, sw = pair(stride, "stride")
    dh, dw = pair(dilation, "dilation")
    pt, pl, pb, pr = get_pad_tuple(padding, (kh, kw))
    oh = _pool_out(h, kh, sh, dh, pt, pb, ceil_mode)
    ow = _pool_out(w, kw, sw, dw, pl, pr, ceil_mode)
    # extra padding after the declared one for windows that run past it (ceil_mode)
    eb = _max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - (h + pt + pb))
    er = _max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - (w + pl + pr))
    fill = te.min_value(data.dtype) if pool_type == "max" else 0.0
    padded = data
    if any(not isinstance(p, int) or p for p in (pt, pl, pb + eb, pr + er)):
        padded = pad(data, (0, 0, pt, pl), (0, 0, pb + eb, pr + er), pad_value=fill,
                     name="pad_temp")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def window(b, ch, y, x):
        return padded[b, ch, y * sh + ry * dh, x * sw + rx * dw]

    if pool_type == "max":
        return te.compute((n, c, oh, ow),
                          lambda b, ch, y, x: te.max(window(b, ch, y, x), axis=[ry, rx]),
                          name="pool_max", tag="pool_max")
    total = te.compute((n, c, oh, ow),
                       lambda b, ch, y, x: te.sum(window(b, ch, y, x), axis=[ry, rx]),
                       name="pool_sum", tag="pool_sum")
    lo_h, hi_h = (-pt, h + pb) if count_include_pad else (0, h)
    lo_w, hi_w = (-pl, w + pr) if count_include_pad else (0, w)

    def avg(b, ch, y, x):
        cnt = _window_count(y * sh - pt, kh, dh, lo_h, hi_h) * \
            _window_count(x * sw - pl, kw, dw, lo_w, hi_w)
        return total[b, ch, y, x] / cnt.astype(data.dtype)

    return te.compute((n, c, oh, ow), avg, name="pool_avg", tag=_tag.ELEMWISE)


def _adaptive_span(size, out: int):
    """The largest window of an adaptive pool of `size` (an int or a symbolic dim) to `out`."""
    if out == 1:
        return size
    if isinstance(size, int):
        return max(-(-(o + 1) * size // out) - (o * size) // out for o in range(out))
    return simplify(_ceildiv(size, out) + 1)


def adaptive_pool(data, output_size, pool_type, layout="NCHW"):
    """Pooling to a fixed output size: output row o covers input rows
    [floor(o H / OH), ceil((o + 1) H / OH)) (the same for columns). H and W may be symbolic
    (a global pool then reduces over all of them)."""
    n, c, h, w = _check(data, layout, "adaptive_pool")
    if pool_type not in ("max", "avg"):
        raise IRError(f"adaptive_pool: pool_type '{pool_type}' is not 'max' or 'avg'")
    oh, ow = pair(output_size, "output_size") if output_size is not None else (1, 1)
    kh, kw = _adaptive_span(h, oh), _adaptive_span(w, ow)
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def bounds(o, size, out):
        return te.floordiv(o * size, out), te.floordiv((o + 1) * size + (out - 1), out)

    def reduce(fn):
        def f(b, ch, y, x):
            if oh == 1 and ow == 1:     # one window: the whole plane
                return fn(data[b, ch, ry, rx], axis=[ry, rx])
            y0, y1 = bounds(y, h, oh)
            x0, x1 = bounds(x, w, ow)
            yy = E.binary(E.Min, y0 + ry, h - 1)
            xx = E.binary(E.Min, x0 + rx, w - 1)
            if isinstance(kh, int) and isinstance(kw, int) and kh == 1 and kw == 1:
                return fn(data[b, ch, yy, xx], axis=[ry, rx])
            return fn(data[b, ch, yy, xx], axis=[ry, rx], where=te.all(ry < y1 - y0,
                                                                       rx < x1 - x0))

        return f

    if pool_type == "max":
        return te.compute((n, c, oh, ow), reduce(te.max), name="adaptive_pool_max",
                          tag="adaptive_pool_max")
    total = te.compute((n, c, oh, ow), reduce(te.sum), name="adaptive_pool_sum",
                       tag="adaptive_pool_sum")

    def avg(b, ch, y, x):
        y0, y1 = bounds(y, h, oh)
        x0, x1 = bounds(x, w, ow)
        return total[b, ch, y, x] / ((y1 - y0) * (x1 - x0)).astype(data.dtype)

    return te.compute((n, c, oh, ow), avg, name="adaptive_pool_avg", tag=_tag.ELEMWISE)


def global_pool(data, pool_type, layout="NCHW"):
    """Pooling over the whole H x W plane -> [N, C, 1, 1]."""
    return adaptive_pool(data, (1, 1), pool_type, layout)


# ---- 3-d (NCDHW) ----------------------------------------------------------------------------
def _triple(v, what):
    if isinstance(v, int):
        return (v,) * 3
    v = tuple(int(x) for x in v)
    if len(v) != 3:
        raise IRError(f"{what} must be an int or 3 values (d, h, w), got {v}")
    return v


def pool3d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False,
           layout="NCDHW", count_include_pad=True):
    """Max or average pooling of NCDHW data over windows of `kernel` (d, h, w), as pool2d.
    padding: int, (d, h, w) or (front, top, left, back, bottom, right). The batch and the
    spatial dims may be symbolic."""
    n, c, *size = _check(data, layout, "pool3d", "NCDHW")
    if pool_type not in ("max", "avg"):
        raise IRError(f"pool3d: pool_type '{pool_type}' is not 'max' or 'avg'")
    ks, ss, ds = _triple(kernel, "kernel"), _triple(stride, "stride"), \
        _triple(dilation, "dilation")
    pads = (padding,) * 6 if isinstance(padding, int) else tuple(int(p) for p in padding)
    if len(pads) == 3:
        pads = pads + pads
    if len(pads) != 6:
        raise IRError(f"pool3d: padding {pads} must be an int, 3 or 6 values")
    before, after = pads[:3], pads[3:]
    out = [_pool_out(size[i], ks[i], ss[i], ds[i], before[i], after[i], ceil_mode)
           for i in range(3)]
    # extra padding after the declared one for windows that run past it (ceil_mode)
    extra = [_max(0, (out[i] - 1) * ss[i] + (ks[i] - 1) * ds[i] + 1
                  - (size[i] + before[i] + after[i])) for i in range(3)]
    fill = te.min_value(data.dtype) if pool_type == "max" else 0.0
    padded = data
    if any(before) or any(after) or any(not isinstance(e, int) or e for e in extra):
        padded = pad(data, (0, 0) + tuple(before),
                     (0, 0) + tuple(a + e for a, e in zip(after, extra)), pad_value=fill,
                     name="pad_temp")
    r = [te.reduce_axis((0, ks[i]), name=name) for i, name in enumerate(("rz", "ry", "rx"))]

    def window(b, ch, *o):
        return padded[(b, ch) + tuple(o[i] * ss[i] + r[i] * ds[i] for i in range(3))]

    shape = (n, c, *out)
    if pool_type == "max":
        return te.compute(shape, lambda b, ch, *o: te.max(window(b, ch, *o), axis=r),
                          name="pool_max", tag="pool_max")
    total = te.compute(shape, lambda b, ch, *o: te.sum(window(b, ch, *o), axis=r),
                       name="pool_sum", tag="pool_sum")

    def avg(b, ch, *o):
        cnt = None
        for i in range(3):
            lo, hi = (-before[i], size[i] + after[i]) if count_include_pad else (0, size[i])
            k = _window_count(o[i] * ss[i] - before[i], ks[i], ds[i], lo, hi)
            cnt = k if cnt is None else cnt * k
        return total[(b, ch) + tuple(o)] / cnt.astype(data.dtype)

    return te.compute(shape, avg, name="pool_avg", tag=_tag.ELEMWISE)


def adaptive_pool3d(data, output_size, pool_type, layout="NCDHW"):
    """Pooling of NCDHW data to a fixed output size (d, h, w): output position o of an axis
    of size S covers [floor(o S / O), ceil((o + 1) S / O)), as adaptive_pool (any dim of the
    input may be symbolic)."""
    n, c, *size = _check(data, layout, "adaptive_pool3d", "NCDHW")
    if pool_type not in ("max", "avg"):
        raise IRError(f"adaptive_pool3d: pool_type '{pool_type}' is not 'max' or 'avg'")
    out = _triple(output_size, "output_size") if output_size is not None else (1, 1, 1)

    ks = [_adaptive_span(size[i], out[i]) for i in range(3)]
    r = [te.reduce_axis((0, ks[i]), name=name) for i, name in enumerate(("rz", "ry", "rx"))]

    def bounds(o, i):
        return te.floordiv(o * size[i], out[i]), \
            te.floordiv((o + 1) * size[i] + (out[i] - 1), out[i])

    def reduce(fn):
        def f(b, ch, *o):
            idx, conds = [], []
            for i in range(3):
                lo, hi = bounds(o[i], i)
                idx.append(E.binary(E.Min, lo + r[i], size[i] - 1))
                if out[i] > 1 and not (isinstance(ks[i], int) and ks[i] == 1):
                    conds.append(r[i] < hi - lo)
            value = data[(b, ch) + tuple(idx)]
            if not conds:
                return fn(value, axis=r)
            return fn(value, axis=r, where=te.all(*conds))

        return f

    shape = (n, c, *out)
    if pool_type == "max":
        return te.compute(shape, reduce(te.max), name="adaptive_pool_max",
                          tag="adaptive_pool_max")
    total = te.compute(shape, reduce(te.sum), name="adaptive_pool_sum", tag="adaptive_pool_sum")

    def avg(b, ch, *o):
        cnt = None
        for i in range(3):
            lo, hi = bounds(o[i], i)
            cnt = (hi - lo) if cnt is None else cnt * (hi - lo)
        return total[(b, ch) + tuple(o)] / cnt.astype(data.dtype)

    return te.compute(shape, avg, name="adaptive_pool_avg", tag=_tag.ELEMWISE)
