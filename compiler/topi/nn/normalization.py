"""batch_norm (inference), layer_norm and lrn."""
from __future__ import annotations

from ... import te
from ...ir.errors import IRError
from ...tir import expr as E
from .. import tag as _tag
from ..utils import get_const_tuple, normalize_axes, normalize_axis, simplify
from .pad import pad


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=None, epsilon=1e-5, center=True,
               scale=True, training=False, momentum=None):
    """Inference batch norm along `axis` (default 1):
    (x - mean) / sqrt(var + eps) * gamma + beta, one broadcast stage (so it fuses after a
    convolution). Returns [out, moving_mean, moving_var] as TVM does."""
    if training:
        raise IRError("batch_norm: training=True is not supported; this is the inference form")
    axis = normalize_axis(1 if axis is None else axis, data.ndim, "batch_norm")
    c = E.make_const

    def f(*i):
        ch = i[axis]
        v = (data(*i) - moving_mean(ch)) / te.sqrt(moving_var(ch) + c(data.dtype, epsilon))
        if scale:
            v = v * gamma(ch)
        if center:
            v = v + beta(ch)
        return v

    out = te.compute(data.shape, f, name="T_batch_norm", tag=_tag.BROADCAST)
    return [out, moving_mean, moving_var]


def layer_norm(data, gamma, beta, axis, epsilon=1e-5):
    """(x - mean) / sqrt(var + eps) * gamma + beta, mean and var over `axis` (an int or a
    list); gamma and beta have the shape of those axes (beta may be None). Any dim may be
    symbolic."""
    axes = normalize_axes(axis, data.ndim, "layer_norm")
    count = 1
    for a in axes:
        count = count * get_const_tuple([data.shape[a]])[0]
    kept = [k for k in range(data.ndim) if k not in axes]
    reduced = tuple(data.shape[k] for k in kept)

    def full(idx, raxes):
        out, it, rt = [], iter(idx), iter(raxes)
        for k in range(data.ndim):
            out.append(next(rt) if k in axes else next(it))
        return tuple(out)

    def keep(idx):
        return tuple(idx[k] for k in kept)

    def raxes():
        return [te.reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    c = E.make_const
    r1 = raxes()
    total = te.compute(reduced, lambda *i: te.sum(data(*full(i, r1)), axis=r1),
                       name="T_layer_norm_sum", tag=_tag.COMM_REDUCE)
    inv = c(data.dtype, 1.0 / count) if isinstance(count, int) else \
        c(data.dtype, 1.0) / simplify(count).astype(data.dtype)
    r2 = raxes()

    def sq(*i):
        d = data(*full(i, r2)) - total(*i) * inv
        return te.sum(d * d, axis=r2)

    var = te.compute(reduced, sq, name="T_layer_norm_var", tag=_tag.COMM_REDUCE)

    def out(*i):
        ri = tuple(i[a] for a in axes)
        v = (data(*i) - total(*keep(i)) * inv) * te.rsqrt(var(*keep(i)) * inv
                                                          + c(data.dtype, epsilon))
        v = v * gamma(*ri)
        return v if beta is None else v + beta(*ri)

    return te.compute(data.shape, out, name="T_layer_norm", tag=_tag.INJECTIVE)


def lrn(data, size, axis=1, alpha=0.0001, beta=0.75, bias=2.0):
    """Local response normalisation across channels (ONNX LRN):
    x / (bias + alpha / size * sum of x^2 over the `size` neighbouring channels) ** beta."""
    axis = normalize_axis(axis, data.ndim, "lrn")
    before = (size - 1) // 2
    pb, pa = [0] * data.ndim, [0] * data.ndim
    pb[axis], pa[axis] = before, size - 1 - before
    padded = pad(data, pb, pa, name="lrn_pad")
    r = te.reduce_axis((0, size), name="r")

    def sq(*i):
        j = list(i)
        j[axis] = i[axis] + r
        v = padded(*j)
        return te.sum(v * v, axis=r)

    sqr_sum = te.compute(data.shape, sq, name="T_lrn_sqr_sum", tag=_tag.COMM_REDUCE)
    c = E.make_const
    return te.compute(
        data.shape,
        lambda *i: data(*i) / te.power(c(data.dtype, bias) + c(data.dtype, alpha / size)
                                       * sqr_sum(*i), c(data.dtype, beta)),
        name="T_lrn", tag=_tag.BROADCAST)
