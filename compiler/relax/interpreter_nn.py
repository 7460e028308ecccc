"""numpy kernels of the neural-network and image operators for the reference interpreter
(registered into interpreter_ops.KERNELS). Convolutions accumulate one kernel tap at a time
(an einsum over channels per tap); pools take the window's taps the same way; resize builds,
per axis, the input indices and weights of every output position (ONNX Resize conventions)
and applies H then W. 3-D convolutions and pools go the same way over (D, H, W) taps."""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from ..topi.nn.dense import dense_pack_weight_numpy
from ..topi.nn.layout import transform_numpy
from ..topi.nn.winograd import winograd_matrices, winograd_weight_transform
from .interpreter_ops import _like, erf, kernel

_SQRT1_2 = 1.0 / math.sqrt(2.0)


# ---- activations ----------------------------------------------------------------------------
@kernel("nn.relu")
def _relu(attrs, x):
    return np.maximum(x, np.zeros((), x.dtype))


@kernel("nn.leakyrelu")
def _leakyrelu(attrs, x):
    return _like(np.where(x > 0, x, x * attrs.alpha), x)


@kernel("nn.prelu")
def _prelu(attrs, x, alpha):
    shape = [1] * x.ndim
    shape[attrs.axis % x.ndim] = -1
    return _like(np.where(x > 0, x, x * alpha.reshape(shape)), x)


@kernel("nn.gelu")
def _gelu(attrs, x):
    return _like(0.5 * x * (1.0 + erf(x * _SQRT1_2)), x)


@kernel("nn.gelu_tanh")
def _gelu_tanh(attrs, x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
    return _like(0.5 * x * (1.0 + np.tanh(inner)), x)


@kernel("nn.silu")
def _silu(attrs, x):
    return _like(x / (1.0 + np.exp(-x)), x)


@kernel("nn.softmax")
def _softmax(attrs, x):
    e = np.exp(x - np.max(x, axis=attrs.axis, keepdims=True))
    return _like(e / np.sum(e, axis=attrs.axis, keepdims=True), x)


@kernel("nn.log_softmax")
def _log_softmax(attrs, x):
    s = x - np.max(x, axis=attrs.axis, keepdims=True)
    return _like(s - np.log(np.sum(np.exp(s), axis=attrs.axis, keepdims=True)), x)


# ---- convolution ----------------------------------------------------------------------------
def _out_dtype(attrs, x):
    return x.dtype if attrs.out_dtype == "void" else np.dtype(attrs.out_dtype)


def _acc_dtype(dtype):
    return np.float64 if dtype.kind == "f" else np.int64


def _unblocked(fn):
    """`fn` (a kernel of NCHW data) also for data in a blocked layout NCHW[x]c (attr `layout`
    or `data_layout`; a weight in OIHW[i]i[o]o): the operands are brought to NCHW / OIHW, the
    result back to the output layout."""
    def run(attrs, x, *rest):
        layout = getattr(attrs, "data_layout", None) or getattr(attrs, "layout", "NCHW")
        if layout == "NCHW":
            return fn(attrs, x, *rest)
        x = transform_numpy(x, layout, "NCHW")
        if rest:
            rest = (transform_numpy(rest[0], attrs.kernel_layout, "OIHW"),) + rest[1:]
        out = fn(attrs, x, *rest)
        return transform_numpy(out, "NCHW", getattr(attrs, "out_layout", "") or layout)
    return run


@kernel("layout_transform")
def _layout_transform(attrs, x):
    return transform_numpy(x, attrs.src_layout, attrs.dst_layout)


@kernel("nn.conv2d")
@_unblocked
def _conv2d(attrs, x, w):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    g = attrs.groups
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    out_dtype = _out_dtype(attrs, x)
    acc = _acc_dtype(out_dtype)
    xp = np.pad(x.astype(acc), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    xg = xp.reshape(n, g, cg, xp.shape[2], xp.shape[3])
    wg = w.astype(acc).reshape(g, o // g, cg, kh, kw)
    out = np.zeros((n, g, o // g, oh, ow), acc)
    for i in range(kh):
        for j in range(kw):
            patch = xg[:, :, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            out += np.einsum("ngchw,goc->ngohw", patch, wg[:, :, :, i, j])
    return out.reshape(n, o, oh, ow).astype(out_dtype)


@kernel("nn.contrib_conv2d_winograd_weight_transform")
def _winograd_weight_transform(attrs, w):
    return winograd_weight_transform(w, attrs.tile_size)


@kernel("nn.contrib_conv2d_winograd_without_weight_transform")
def _conv2d_winograd(attrs, x, u):
    """The Winograd algorithm itself, in float64: input tiles transformed, multiplied by the
    transformed weight point by point, transformed back."""
    m = attrs.tile_size
    a = m + 2
    at, _, bt = winograd_matrices(m)
    xn = transform_numpy(x, attrs.data_layout, "NCHW").astype(np.float64)
    n, c, h, w = xn.shape
    pt, pl, pb, pr = attrs.padding
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = -(-oh // m), -(-ow // m)
    xp = np.pad(xn, ((0, 0), (0, 0), (pt, th * m + 2 - h - pt), (pl, tw * m + 2 - w - pl)))
    d = np.stack([np.stack([xp[:, :, r:r + th * m:m, s:s + tw * m:m] for s in range(a)], -1)
                  for r in range(a)], -2)                          # [n, c, th, tw, a, a]
    v = np.einsum("ir,ncyxrs,js->ijncyx", bt, d, bt)
    points, ocb, ic, ob = u.shape
    uw = u.astype(np.float64).reshape(a, a, ocb, ic, ob).transpose(0, 1, 2, 4, 3)
    mm = np.einsum("ijoc,ijncyx->ijnoyx", uw.reshape(a, a, ocb * ob, ic), v)
    y = np.einsum("pi,ijnoyx,qj->noypxq", at, mm, at).reshape(n, ocb * ob, th * m, tw * m)
    out = y[:, :, :oh, :ow].astype(_out_dtype(attrs, x))
    return transform_numpy(out, "NCHW", attrs.out_layout or attrs.data_layout)


@kernel("nn.conv2d_transpose")
def _conv2d_transpose(attrs, x, w):
    n, c, h, wd = x.shape
    ci, og, kh, kw = w.shape
    g = attrs.groups
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    oph, opw = attrs.output_padding
    out_dtype = _out_dtype(attrs, x)
    acc = _acc_dtype(out_dtype)
    full_h = (h - 1) * sh + dh * (kh - 1) + 1
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1
    out = np.zeros((n, g, og, full_h + oph, full_w + opw), acc)
    xg = x.astype(acc).reshape(n, g, c // g, h, wd)
    wg = w.astype(acc).reshape(g, ci // g, og, kh, kw)
    for i in range(kh):
        for j in range(kw):
            out[:, :, :, i * dh:i * dh + sh * (h - 1) + 1:sh,
                j * dw:j * dw + sw * (wd - 1) + 1:sw] += \
                np.einsum("ngchw,gco->ngohw", xg, wg[:, :, :, i, j])
    oh = full_h - pt - pb + oph
    ow = full_w - pl - pr + opw
    out = out.reshape(n, g * og, full_h + oph, full_w + opw)[:, :, pt:pt + oh, pl:pl + ow]
    return np.ascontiguousarray(out).astype(out_dtype)


@kernel("nn.dense")
def _dense(attrs, x, w):
    dtype = _out_dtype(attrs, x)
    return np.matmul(x.astype(dtype), w.astype(dtype).T).astype(dtype)


@kernel("nn.contrib_dense_pack")
def _dense_pack(attrs, x, w):
    dtype = _out_dtype(attrs, x)
    panels, k, block = w.shape
    wt = w.astype(dtype).transpose(0, 2, 1).reshape(panels * block, k)[:attrs.units]
    return np.matmul(x.astype(dtype), wt.T).astype(dtype)


@kernel("nn.contrib_dense_pack_weight_transform")
def _dense_pack_weight_transform(attrs, w):
    return dense_pack_weight_numpy(w, attrs.block, attrs.weight_layout)


# ---- pooling --------------------------------------------------------------------------------
def _pool_out(size, k, s, d, before, after, ceil_mode):
    span = d * (k - 1) + 1
    num = size + before + after - span
    if not ceil_mode:
        return num // s + 1
    out = -(-num // s) + 1
    if (out - 1) * s >= size + before:
        out -= 1
    return out


def _windows(xp, kh, kw, sh, sw, dh, dw, oh, ow):
    for i in range(kh):
        for j in range(kw):
            yield xp[..., i * dh:i * dh + sh * (oh - 1) + 1:sh,
                     j * dw:j * dw + sw * (ow - 1) + 1:sw]


def _pool(attrs, x, reduce_max: bool):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = attrs.pool_size, attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    oh = _pool_out(h, kh, sh, dh, pt, pb, attrs.ceil_mode)
    ow = _pool_out(w, kw, sw, dw, pl, pr, attrs.ceil_mode)
    # Extra rows/cols past the bottom/right padding that ceil-mode windows reach.
    eh = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - (h + pt + pb))
    ew = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - (w + pl + pr))
    pads = ((0, 0), (0, 0), (pt, pb + eh), (pl, pr + ew))
    out_dtype = _out_dtype(attrs, x)
    if reduce_max:
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, pads, constant_values=low)
        out = None
        for win in _windows(xp, kh, kw, sh, sw, dh, dw, oh, ow):
            out = win.copy() if out is None else np.maximum(out, win)
        return out.astype(out_dtype)
    xp = np.pad(x.astype(np.float64), pads)
    total = sum(_windows(xp, kh, kw, sh, sw, dh, dw, oh, ow))
    inside = np.pad(np.ones((h, w)), ((pt, pb), (pl, pr)),
                    constant_values=1.0 if attrs.count_include_pad else 0.0)
    inside = np.pad(inside, ((0, eh), (0, ew)))
    count = sum(_windows(inside, kh, kw, sh, sw, dh, dw, oh, ow))
    return (total / np.maximum(count, 1)).astype(out_dtype)


@kernel("nn.max_pool2d")
@_unblocked
def _max_pool2d(attrs, x):
    return _pool(attrs, x, True)


@kernel("nn.avg_pool2d")
@_unblocked
def _avg_pool2d(attrs, x):
    return _pool(attrs, x, False)


def _adaptive(attrs, x, fn):
    n, c, h, w = x.shape
    oh, ow = attrs.output_size if attrs.output_size is not None else (h, w)
    out = np.empty((n, c, oh, ow), _out_dtype(attrs, x))
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[:, :, i, j] = fn(x[:, :, h0:h1, w0:w1], axis=(2, 3))
    return out


@kernel("nn.adaptive_avg_pool2d")
@_unblocked
def _adaptive_avg_pool2d(attrs, x):
    return _adaptive(attrs, x, np.mean)


@kernel("nn.adaptive_max_pool2d")
@_unblocked
def _adaptive_max_pool2d(attrs, x):
    return _adaptive(attrs, x, np.max)


# ---- 3-D convolution and pooling (NCDHW) ----------------------------------------------------
def _taps3d(xp, kernel, stride, dilation, out):
    """The strided views of `xp` ([..., D, H, W]) at each tap of a 3-D window."""
    for tap in itertools.product(*(range(k) for k in kernel)):
        yield xp[(Ellipsis,) + tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                                     for t, d, s, o in zip(tap, dilation, stride, out))]


def _unblocked3d(fn):
    """`fn` (a kernel of NCDHW data, OIDHW weights) also for data in a blocked layout
    NCDHW[x]c with a weight in OIDHW[i]i[o]o: the operands are brought to NCDHW / OIDHW, the
    result to the output layout."""
    def run(attrs, x, w):
        if attrs.data_layout == "NCDHW":
            return fn(attrs, x, w)
        out = fn(attrs, transform_numpy(x, attrs.data_layout, "NCDHW"),
                 transform_numpy(w, attrs.kernel_layout, "OIDHW"))
        return transform_numpy(out, "NCDHW", attrs.out_layout or attrs.data_layout)
    return run


@kernel("nn.conv3d")
@_unblocked3d
def _conv3d(attrs, x, w):
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    g = attrs.groups
    pads = attrs.padding
    out_dtype = _out_dtype(attrs, x)
    acc = _acc_dtype(out_dtype)
    xp = np.pad(x.astype(acc), ((0, 0), (0, 0)) + tuple(zip(pads[:3], pads[3:])))
    out = [(xp.shape[2 + i] - attrs.dilation[i] * (w.shape[2 + i] - 1) - 1)
           // attrs.strides[i] + 1 for i in range(3)]
    xg = xp.reshape((n, g, cg) + xp.shape[2:])
    wg = w.astype(acc).reshape((g, o // g, cg) + w.shape[2:])
    res = np.zeros((n, g, o // g, *out), acc)
    taps = itertools.product(*(range(k) for k in w.shape[2:]))
    for tap, patch in zip(taps, _taps3d(xg, w.shape[2:], attrs.strides, attrs.dilation, out)):
        res += np.einsum("ngcdhw,goc->ngodhw", patch, wg[(Ellipsis,) + tap])
    return res.reshape(n, o, *out).astype(out_dtype)


def _pool3d(attrs, x, reduce_max: bool):
    size, k, st, dil = x.shape[2:], attrs.pool_size, attrs.strides, attrs.dilation
    before, after = attrs.padding[:3], attrs.padding[3:]
    out = [_pool_out(size[i], k[i], st[i], dil[i], before[i], after[i], attrs.ceil_mode)
           for i in range(3)]
    # extra positions past the trailing padding that ceil-mode windows reach
    extra = [max(0, (out[i] - 1) * st[i] + dil[i] * (k[i] - 1) + 1
                 - (size[i] + before[i] + after[i])) for i in range(3)]
    pads = tuple((b, a + e) for b, a, e in zip(before, after, extra))
    out_dtype = _out_dtype(attrs, x)
    if reduce_max:
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, ((0, 0), (0, 0)) + pads, constant_values=low)
        return functools.reduce(np.maximum, _taps3d(xp, k, st, dil, out)).astype(out_dtype)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + pads)
    total = sum(_taps3d(xp, k, st, dil, out))
    inside = np.pad(np.ones(size), tuple(zip(before, after)),
                    constant_values=1.0 if attrs.count_include_pad else 0.0)
    inside = np.pad(inside, tuple((0, e) for e in extra))
    count = sum(_taps3d(inside, k, st, dil, out))
    return (total / np.maximum(count, 1)).astype(out_dtype)


@kernel("nn.max_pool3d")
def _max_pool3d(attrs, x):
    return _pool3d(attrs, x, True)


@kernel("nn.avg_pool3d")
def _avg_pool3d(attrs, x):
    return _pool3d(attrs, x, False)


def _adaptive3d(attrs, x, fn):
    size = x.shape[2:]
    out_size = tuple(attrs.output_size) if attrs.output_size is not None else size
    out = np.empty(x.shape[:2] + out_size, _out_dtype(attrs, x))
    for o in itertools.product(*(range(v) for v in out_size)):
        window = tuple(slice((o[i] * size[i]) // out_size[i],
                             -(-((o[i] + 1) * size[i]) // out_size[i])) for i in range(3))
        out[(Ellipsis,) + o] = fn(x[(Ellipsis,) + window], axis=(2, 3, 4))
    return out


@kernel("nn.adaptive_avg_pool3d")
def _adaptive_avg_pool3d(attrs, x):
    return _adaptive3d(attrs, x, np.mean)


@kernel("nn.adaptive_max_pool3d")
def _adaptive_max_pool3d(attrs, x):
    return _adaptive3d(attrs, x, np.max)


# ---- normalization --------------------------------------------------------------------------
def _on_axis(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


@kernel("nn.batch_norm")
def _batch_norm(attrs, x, gamma, beta, mean, var):
    axis = attrs.axis % x.ndim
    out = (x - _on_axis(mean, axis, x.ndim)) / np.sqrt(_on_axis(var, axis, x.ndim) +
                                                       attrs.epsilon)
    if attrs.scale:
        out = out * _on_axis(gamma, axis, x.ndim)
    if attrs.center:
        out = out + _on_axis(beta, axis, x.ndim)
    return (_like(out, x), mean, var)


@kernel("nn.layer_norm")
def _layer_norm(attrs, x, gamma, beta):
    axes = tuple(sorted(a % x.ndim for a in attrs.axes))
    xf = x.astype(np.float64)
    mean = xf.mean(axis=axes, keepdims=True)
    var = xf.var(axis=axes, keepdims=True)
    out = (xf - mean) / np.sqrt(var + attrs.epsilon)
    shape = [x.shape[i] if i in axes else 1 for i in range(x.ndim)]
    if attrs.scale:
        out = out * gamma.reshape(shape)
    if attrs.center:
        out = out + beta.reshape(shape)
    return _like(out, x)


@kernel("nn.lrn")
def _lrn(attrs, x):
    axis = attrs.axis % x.ndim
    size = attrs.size
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    sq = np.moveaxis(x.astype(np.float64) ** 2, axis, 0)
    padded = np.pad(sq, [(lo, hi)] + [(0, 0)] * (x.ndim - 1))
    total = sum(padded[k:k + x.shape[axis]] for k in range(size))
    total = np.moveaxis(total, 0, axis)
    return _like(x / (attrs.bias + attrs.alpha / size * total) ** attrs.beta, x)


@kernel("nn.pad")
def _pad(attrs, x):
    pw = attrs.pad_width
    pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(x.ndim)]
    # Negative pads crop.
    index = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))
    x = x[index]
    pairs = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if attrs.pad_mode == "constant":
        return np.pad(x, pairs, constant_values=np.asarray(attrs.pad_value).astype(x.dtype))
    return np.pad(x, pairs, mode=attrs.pad_mode)


# ---- image ----------------------------------------------------------------------------------
def _source_coord(out_idx, in_size, out_size, mode):
    scale = out_size / in_size
    x = out_idx.astype(np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_size > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (in_size - 1) / (out_size - 1) if out_size > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _round(x, method):
    if method in ("", "round"):
        return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))
    if method == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if method == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if method == "floor":
        return np.floor(x)
    if method == "ceil":
        return np.ceil(x)
    raise ValueError(f"unknown rounding_method {method!r}")


def _cubic_weights(t, a):
    """Weights of taps at offsets -1, 0, 1, 2 for fractional position t."""
    def k(d):
        d = np.abs(d)
        return np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                        np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    return np.stack([k(t + 1), k(t), k(1 - t), k(2 - t)], axis=-1)


def _taps(attrs, in_size, out_size):
    """(indices, weights), each (out_size, taps), of the input positions of each output."""
    x = _source_coord(np.arange(out_size), in_size, out_size,
                      attrs.coordinate_transformation_mode)
    if attrs.method == "nearest_neighbor":
        idx = _round(x, attrs.rounding_method).astype(np.int64)
        return np.clip(idx, 0, in_size - 1)[:, None], np.ones((out_size, 1))
    x0 = np.floor(x)
    t = x - x0
    x0 = x0.astype(np.int64)
    if attrs.method == "linear":
        idx = np.stack([x0, x0 + 1], axis=-1)
        weights = np.stack([1 - t, t], axis=-1)
        return np.clip(idx, 0, in_size - 1), weights
    idx = np.stack([x0 - 1, x0, x0 + 1, x0 + 2], axis=-1)
    weights = _cubic_weights(t, attrs.cubic_alpha)
    if attrs.cubic_exclude:
        weights = np.where((idx >= 0) & (idx < in_size), weights, 0.0)
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.clip(idx, 0, in_size - 1), weights


def _resize_axis(x, axis, out_size, attrs):
    idx, weights = _taps(attrs, x.shape[axis], out_size)
    out = 0.0
    for k in range(idx.shape[1]):
        shape = [1] * x.ndim
        shape[axis] = out_size
        out = out + np.take(x, idx[:, k], axis=axis) * weights[:, k].reshape(shape)
    return out


@kernel("image.resize2d")
def _resize2d(attrs, x, size):
    oh, ow = size
    out = _resize_axis(x.astype(np.float64), 2, oh, attrs)
    out = _resize_axis(out, 3, ow, attrs)
    dtype = _out_dtype(attrs, x)
    if dtype.kind in "iu":
        out = np.round(out)
    return out.astype(dtype)


# ---- recurrent layers -------------------------------------------------------------------------
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _recurrence(attrs, gates, states, cell):
    """The time loop of nn.gru_sequence / nn.lstm_sequence in float64: `cell(d, x, states)`
    gives the new states of direction d from the step's projected gates x [batch, G * h]."""
    seq, batch, nd, _ = gates.shape
    hidden = states[0].shape[-1]
    reverse = [False, True] if nd == 2 else [attrs.direction == "reverse"]
    y = np.zeros((seq, nd, batch, hidden))
    finals = [np.zeros((nd, batch, hidden)) for _ in states]
    for d in range(nd):
        cur = [s[d].astype(np.float64) for s in states]
        for t in (range(seq - 1, -1, -1) if reverse[d] else range(seq)):
            cur = cell(d, gates[t, :, d].astype(np.float64), cur)
            y[t, d] = cur[0]
        for f, c in zip(finals, cur):
            f[d] = c
    return tuple(_like(v, gates) for v in [y] + finals)


def _clipper(attrs):
    c = attrs.clip
    return (lambda v: v) if c is None else (lambda v: np.clip(v, -c, c))


@kernel("nn.gru_sequence")
def _gru_sequence(attrs, gates, weight, bias, h0):
    clip, h = _clipper(attrs), h0.shape[-1]
    w, b = weight.astype(np.float64), bias.astype(np.float64)

    def cell(d, x, states):
        (hp,) = states
        z = _sigmoid(clip(x[:, :h] + hp @ w[d, :, :h] + b[d, :h]))
        r = _sigmoid(clip(x[:, h:2 * h] + hp @ w[d, :, h:2 * h] + b[d, h:2 * h]))
        rec = r * (hp @ w[d, :, 2 * h:] + b[d, 2 * h:]) if attrs.linear_before_reset \
            else (r * hp) @ w[d, :, 2 * h:] + b[d, 2 * h:]
        cand = np.tanh(clip(x[:, 2 * h:] + rec))
        return [(1 - z) * cand + z * hp]

    return _recurrence(attrs, gates, [h0], cell)


@kernel("nn.lstm_sequence")
def _lstm_sequence(attrs, gates, weight, h0, c0, peephole=None):
    clip, h = _clipper(attrs), h0.shape[-1]
    w = weight.astype(np.float64)
    p = None if peephole is None else peephole.astype(np.float64)

    def cell(d, x, states):
        hp, cp = states
        a = x + hp @ w[d]
        i, o, f, g = a[:, :h], a[:, h:2 * h], a[:, 2 * h:3 * h], a[:, 3 * h:]
        if p is not None:
            i, f = i + p[d, :h] * cp, f + p[d, 2 * h:] * cp
        c = _sigmoid(clip(f)) * cp + _sigmoid(clip(i)) * np.tanh(clip(g))
        if p is not None:
            o = o + p[d, h:2 * h] * c
        return [_sigmoid(clip(o)) * np.tanh(c), c]

    return _recurrence(attrs, gates, [h0, c0], cell)
