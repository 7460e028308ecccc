"""Neural-network operators: Conv (1-D, 2-D and 3-D) and ConvTranspose (1-D and 2-D) (auto_pad,
groups, dilations, bias), Gemm, MatMul, Softmax / LogSoftmax (both axis semantics),
BatchNormalization (inference, any rank), LayerNormalization, InstanceNormalization,
GroupNormalization (scale and bias per group or per channel), LRN, MaxPool / AveragePool (1-D,
2-D and 3-D; pads, auto_pad, ceil_mode, dilations, count_include_pad), GlobalAveragePool /
GlobalMaxPool.

1-D convolutions and pools run as 2-D ones over a unit height; 3-D ones are relax.nn.conv3d
and the 3-D pools. A ConvTranspose with groups runs as one per group, concatenated; with
dilations, on the kernel with zeros between its taps."""
from __future__ import annotations

import numpy as np

from ...relax import op as R
from .common import const, converter, norm_axis
from .elementwise import scalar
from .tensor import shape_prod


# ---- windows: pads from auto_pad, 1-D as 2-D ------------------------------------------------
def _window_attrs(ctx, spatial, kernel):
    """(strides, dilations, pads as (begins, ends)) of a Conv / pool node."""
    n = len(kernel)
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    pads = list(ctx.attr("pads", [0] * (2 * n)))
    if len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise ctx.error(f"strides {strides}, dilations {dilations} and pads {pads} do not fit "
                        f"a {n}-D window")
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    begins, ends = pads[:n], pads[n:]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if not all(isinstance(d, int) for d in spatial):
            raise ctx.error(f"auto_pad={auto_pad} needs the input's spatial dims, which are "
                            f"symbolic {tuple(spatial)}; bind them with from_onnx(model, "
                            "shape={...})")
        begins, ends = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            begins.append(small if auto_pad == "SAME_UPPER" else big)
            ends.append(big if auto_pad == "SAME_UPPER" else small)
    elif auto_pad == "VALID":
        begins, ends = [0] * n, [0] * n
    elif auto_pad != "NOTSET":
        raise ctx.unsupported(f"auto_pad={auto_pad!r}")
    return strides, dilations, begins, ends


def _spatial_rank(ctx, ranks=(1, 2, 3)) -> int:
    n = ctx.ndim(0) - 2
    if n not in ranks:
        names = ", ".join(f"{r}-D" for r in ranks[:-1]) + f" and {ranks[-1]}-D"
        raise ctx.unsupported(f"a {n}-D spatial input ({names} are)")
    return n


def _as_2d(x, n):
    return R.expand_dims(x, 2) if n == 1 else x


def _from_2d(y, n):
    return R.squeeze(y, [2]) if n == 1 else y


def _pair(values, n, fill):
    return [fill] + list(values) if n == 1 else list(values)


def _padding(begins, ends, n):
    b, e = _pair(begins, n, 0), _pair(ends, n, 0)
    return (b[0], b[1], e[0], e[1])


def _bias_shape(ndim):
    return (-1,) + (1,) * (ndim - 2)


# ---- convolutions ---------------------------------------------------------------------------
@converter("Conv")
def _conv(ctx):
    n = _spatial_rank(ctx)
    x, w = ctx.input(0), ctx.input(1)
    kernel = list(ctx.attr("kernel_shape", ctx.shape(1)[2:]))
    strides, dil, begins, ends = _window_attrs(ctx, ctx.shape(0)[2:], kernel)
    if n == 3:
        y = R.nn.conv3d(x, w, strides=strides, padding=begins + ends, dilation=dil,
                        groups=int(ctx.attr("group", 1)))
        return R.add(y, R.reshape(ctx.input(2), _bias_shape(5))) if ctx.has(2) else y
    y = R.nn.conv2d(_as_2d(x, n), _as_2d(w, n), strides=_pair(strides, n, 1),
                    padding=_padding(begins, ends, n), dilation=_pair(dil, n, 1),
                    groups=int(ctx.attr("group", 1)))
    y = _from_2d(y, n)
    if ctx.has(2):
        y = R.add(y, R.reshape(ctx.input(2), _bias_shape(n + 2)))
    return y


@converter("ConvTranspose")
def _conv_transpose(ctx):
    n = _spatial_rank(ctx, (1, 2))
    x, w = ctx.input(0), ctx.input(1)
    kernel = list(ctx.attr("kernel_shape", ctx.shape(1)[2:]))
    strides = list(ctx.attr("strides", [1] * n))
    dil = list(ctx.attr("dilations", [1] * n))
    out_pad = list(ctx.attr("output_padding", [0] * n))
    pads = list(ctx.attr("pads", [0] * (2 * n)))
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    out_shape = ctx.attr("output_shape")
    if out_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        spatial = ctx.static_shape(0, "ConvTranspose with output_shape or auto_pad")[2:]
        if out_shape is None:
            out_shape = [size * s for size, s in zip(spatial, strides)]
        out_shape = list(out_shape)[-n:]
        pads = [0] * (2 * n)
        for i in range(n):
            total = strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1 \
                - out_shape[i]
            if total < 0:
                out_pad[i] -= total
                total = 0
            small, big = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                pads[i], pads[n + i] = small, big
            else:
                pads[i], pads[n + i] = big, small
    elif auto_pad == "VALID":
        pads = [0] * (2 * n)
    x2, w2 = _as_2d(x, n), _as_2d(w, n)
    dil2 = _pair(dil, n, 1)
    if any(d != 1 for d in dil2):
        # a dilated kernel is the kernel with d - 1 zeros between its taps
        wshape = list(ctx.static_shape(1, "ConvTranspose with dilations"))
        if n == 1:
            wshape.insert(2, 1)
        for axis, d in zip((2, 3), dil2):
            w2 = _dilate(w2, wshape, axis, d, ctx.dtype(1))

    def conv(xi, wi):
        return R.nn.conv2d_transpose(xi, wi, strides=_pair(strides, n, 1),
                                     padding=_padding(pads[:n], pads[n:], n),
                                     output_padding=_pair(out_pad, n, 0))

    groups = int(ctx.attr("group", 1))
    if groups == 1:
        y = conv(x2, w2)
    else:   # one transposed convolution per group of channels
        xs, ws = ctx.emit(R.split(x2, groups, 1)), ctx.emit(R.split(w2, groups, 0))
        y = R.concat([conv(xs[i], ws[i]) for i in range(groups)], 1)
    y = _from_2d(y, n)
    if ctx.has(2):
        y = R.add(y, R.reshape(ctx.input(2), _bias_shape(n + 2)))
    return y


def _dilate(w, shape, axis, d, dtype):
    """Weight `w` of static `shape` (updated) with d - 1 zeros between its taps on `axis`."""
    k = shape[axis]
    if d == 1 or k == 1:
        return w
    zeros = list(shape)
    zeros.insert(axis + 1, d - 1)
    zeros[axis] = k
    spread = R.concat([R.expand_dims(w, [axis + 1]), const(np.zeros(zeros), dtype)], axis + 1)
    merged = list(shape)
    merged[axis] = k * d
    shape[axis] = (k - 1) * d + 1
    return R.strided_slice(R.reshape(spread, tuple(merged)), [axis], [0], [shape[axis]])


# ---- matrix products ------------------------------------------------------------------------
@converter("Gemm")
def _gemm(ctx):
    a, b = ctx.input(0), ctx.input(1)
    trans_a, trans_b = int(ctx.attr("transA", 0)), int(ctx.attr("transB", 0))
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    dt = ctx.dtype(0)
    if trans_b and not trans_a:
        y = R.nn.dense(a, b)
    else:
        y = R.matmul(R.permute_dims(a, (1, 0)) if trans_a else a,
                     R.permute_dims(b, (1, 0)) if trans_b else b)
    if alpha != 1.0:
        y = R.multiply(y, scalar(alpha, dt))
    if ctx.has(2) and beta != 0.0:
        c = ctx.input(2)
        if beta != 1.0:
            c = R.multiply(c, scalar(beta, dt))
        y = R.add(y, c)
    return y


@converter("MatMul")
def _matmul(ctx):
    a, b = ctx.input(0), ctx.input(1)
    na, nb = ctx.ndim(0), ctx.ndim(1)
    if na == 1:
        a = R.expand_dims(a, 0)
    if nb == 1:
        b = R.expand_dims(b, 1)
    y = R.matmul(a, b)
    if na == 1 and nb == 1:
        return R.reshape(y, ())
    if na == 1:
        return R.squeeze(y, [-2])
    if nb == 1:
        return R.squeeze(y, [-1])
    return y


# ---- softmax --------------------------------------------------------------------------------
@converter("Softmax", "LogSoftmax")
def _softmax(ctx):
    fn = R.nn.softmax if ctx.op_type == "Softmax" else R.nn.log_softmax
    x, ndim = ctx.input(0), ctx.ndim(0)
    if ctx.opset >= 13:
        return fn(x, norm_axis(ctx, ctx.attr("axis", -1), ndim))
    # before opset 13: the input is seen as 2-D [prod(dims[:axis]), prod(dims[axis:])]
    axis = norm_axis(ctx, ctx.attr("axis", 1), ndim)
    if axis == ndim - 1:
        return fn(x, -1)
    shape = ctx.shape(0)
    flat = R.reshape(x, (shape_prod(shape[:axis]), shape_prod(shape[axis:])))
    return R.reshape(fn(flat, 1), shape)


# ---- normalization --------------------------------------------------------------------------
@converter("BatchNormalization")
def _batch_norm(ctx):
    if int(ctx.attr("training_mode", 0)) or any(ctx.output_used(i) for i in range(1, 5)):
        raise ctx.unsupported("training mode (running statistics as outputs)")
    if ctx.opset < 9 and int(ctx.attr("spatial", 1)) != 1:
        raise ctx.unsupported("spatial=0")
    bn = R.nn.batch_norm(*[ctx.input(i) for i in range(5)], axis=1,
                         epsilon=float(ctx.attr("epsilon", 1e-5)))
    return bn[0]


def _normalized(x, axes, eps, dt):
    mean = R.mean(x, axes, keepdims=True)
    diff = R.subtract(x, mean)
    var = R.mean(R.multiply(diff, diff), axes, keepdims=True)
    return mean, diff, R.rsqrt(R.add(var, scalar(eps, dt)))


@converter("LayerNormalization")
def _layer_norm(ctx):
    x, ndim, dt = ctx.input(0), ctx.ndim(0), ctx.dtype(0)
    axis = norm_axis(ctx, ctx.attr("axis", -1), ndim)
    axes = list(range(axis, ndim))
    eps = float(ctx.attr("epsilon", 1e-5))
    scale = ctx.input(1)
    norm_shape = ctx.shape(0)[axis:]
    scale_shape = ctx.shape(1)
    extra = ctx.output_used(1) or ctx.output_used(2)
    if extra or tuple(scale_shape) != tuple(norm_shape) or \
            (ctx.has(2) and tuple(ctx.shape(2)) != tuple(norm_shape)):
        mean, diff, inv = _normalized(x, axes, eps, dt)
        y = R.multiply(R.multiply(diff, inv), scale)
        if ctx.has(2):
            y = R.add(y, ctx.input(2))
        return [y, mean, inv]
    bias = ctx.input(2) if ctx.has(2) else \
        scalar(np.zeros(tuple(int(d) for d in norm_shape)), dt)
    return R.nn.layer_norm(x, scale, bias, axes=axes, epsilon=eps)


@converter("InstanceNormalization")
def _instance_norm(ctx):
    x, ndim, dt = ctx.input(0), ctx.ndim(0), ctx.dtype(0)
    _, diff, inv = _normalized(x, list(range(2, ndim)), float(ctx.attr("epsilon", 1e-5)), dt)
    shape = _bias_shape(ndim)
    scale, bias = R.reshape(ctx.input(1), shape), R.reshape(ctx.input(2), shape)
    return R.add(R.multiply(R.multiply(diff, inv), scale), bias)


@converter("GroupNormalization")
def _group_norm(ctx):
    shape = ctx.static_shape(0, "GroupNormalization")
    x, dt = ctx.input(0), ctx.dtype(0)
    if len(shape) < 2:
        raise ctx.error(f"needs an input of at least 2 dims (N, C, ...), got {shape}")
    n, c = shape[0], shape[1]
    groups = int(ctx.attr("num_groups", 0))
    if groups <= 0 or c % groups:
        raise ctx.error(f"num_groups={groups} does not divide the {c} channels")
    eps = float(ctx.attr("epsilon", 1e-5))
    grouped = R.reshape(x, (n, groups, -1))
    _, diff, inv = _normalized(grouped, [2], eps, dt)
    y = R.multiply(diff, inv)
    scale, bias = ctx.input(1), ctx.input(2)
    if tuple(ctx.shape(1)) == (groups,) and groups != c:
        # opset 18: a scale and a bias per group
        y = R.add(R.multiply(y, R.reshape(scale, (groups, 1))), R.reshape(bias, (groups, 1)))
        return R.reshape(y, tuple(shape))
    y = R.reshape(y, tuple(shape))
    per_channel = _bias_shape(len(shape))
    return R.add(R.multiply(y, R.reshape(scale, per_channel)), R.reshape(bias, per_channel))


@converter("LRN")
def _lrn(ctx):
    if "size" not in ctx.attrs:
        raise ctx.error("attribute 'size' is required")
    return R.nn.lrn(ctx.input(0), size=int(ctx.attr("size")), axis=1,
                    bias=float(ctx.attr("bias", 1.0)), alpha=float(ctx.attr("alpha", 1e-4)),
                    beta=float(ctx.attr("beta", 0.75)))


# ---- pooling --------------------------------------------------------------------------------
@converter("MaxPool", "AveragePool")
def _pool(ctx):
    if ctx.output_used(1):
        raise ctx.unsupported("the Indices output")
    if int(ctx.attr("storage_order", 0)) != 0:
        raise ctx.unsupported("storage_order=1")
    n = _spatial_rank(ctx)
    kernel = list(ctx.attr("kernel_shape", []))
    if len(kernel) != n:
        raise ctx.error(f"kernel_shape {kernel} must have {n} values")
    strides, dil, begins, ends = _window_attrs(ctx, ctx.shape(0)[2:], kernel)
    if n == 3:
        args = dict(pool_size=kernel, strides=strides, padding=begins + ends, dilation=dil,
                    ceil_mode=bool(ctx.attr("ceil_mode", 0)))
        if ctx.op_type == "MaxPool":
            return R.nn.max_pool3d(ctx.input(0), **args)
        return R.nn.avg_pool3d(ctx.input(0),
                               count_include_pad=bool(ctx.attr("count_include_pad", 0)), **args)
    common = dict(pool_size=_pair(kernel, n, 1), strides=_pair(strides, n, 1),
                  padding=_padding(begins, ends, n), dilation=_pair(dil, n, 1),
                  ceil_mode=bool(ctx.attr("ceil_mode", 0)))
    x = _as_2d(ctx.input(0), n)
    if ctx.op_type == "MaxPool":
        y = R.nn.max_pool2d(x, **common)
    else:
        y = R.nn.avg_pool2d(x, count_include_pad=bool(ctx.attr("count_include_pad", 0)),
                            **common)
    return _from_2d(y, n)


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx):
    x, ndim = ctx.input(0), ctx.ndim(0)
    avg = ctx.op_type == "GlobalAveragePool"
    if ndim == 4:
        fn = R.nn.adaptive_avg_pool2d if avg else R.nn.adaptive_max_pool2d
        return fn(x, (1, 1))
    if ndim == 5:
        fn = R.nn.adaptive_avg_pool3d if avg else R.nn.adaptive_max_pool3d
        return fn(x, (1, 1, 1))
    axes = list(range(2, ndim))
    return (R.mean if avg else R.max)(x, axes, keepdims=True)
