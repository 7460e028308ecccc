"""numpy references for the topi tests: convolution (2-d and 3-d) and padding."""
import itertools

import numpy as np


def pad_nchw(x, top, left, bottom, right, value=0.0):
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def conv2d_ref(x, w, stride=1, padding=(0, 0, 0, 0), dilation=1, groups=1):
    """NCHW x OIHW (I = C / groups) convolution in numpy."""
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    xp = pad_nchw(x, *padding).astype("float64")
    n, c, h, wd = xp.shape
    f, cg, kh, kw = w.shape
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg].astype("float64")
        for ry in range(kh):
            for rx in range(kw):
                patch = xs[:, :, ry * dh: ry * dh + (oh - 1) * sh + 1: sh,
                           rx * dw: rx * dw + (ow - 1) * sw + 1: sw]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, ry, rx])
    return out


def pool2d_ref(x, kernel, stride, dilation, pads, pool_type, ceil_mode, count_include_pad):
    """pool2d by windows, PyTorch's rules: with ceil_mode the last window must start inside
    the input or the leading padding; an average counts the window's elements inside the
    padded input (count_include_pad) or inside the input."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    pt, pl, pb, pr = pads

    def out_size(size, k, s, d, p0, p1):
        span = size + p0 + p1 - d * (k - 1) - 1
        o = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= size + p0:
            o -= 1
        return o

    oh, ow = out_size(h, kh, sh, dh, pt, pb), out_size(w, kw, sw, dw, pl, pr)
    out = np.zeros((n, c, oh, ow), x.dtype)
    for y in range(oh):
        for z in range(ow):
            ys = [y * sh - pt + i * dh for i in range(kh)]
            xs = [z * sw - pl + j * dw for j in range(kw)]
            vals = [x[:, :, a, b] for a in ys for b in xs if 0 <= a < h and 0 <= b < w]
            if pool_type == "max":
                out[:, :, y, z] = np.max(vals, axis=0)
                continue
            if count_include_pad:
                cnt = sum(1 for a in ys if -pt <= a < h + pb) * \
                    sum(1 for b in xs if -pl <= b < w + pr)
            else:
                cnt = len(vals)
            out[:, :, y, z] = np.sum(vals, axis=0) / cnt
    return out


def adaptive_pool_ref(x, out_size, pool_type):
    n, c, h, w = x.shape
    oh, ow = out_size
    out = np.zeros((n, c, oh, ow), x.dtype)
    fn = np.max if pool_type == "max" else np.mean
    for y in range(oh):
        for z in range(ow):
            y0, y1 = y * h // oh, -(-(y + 1) * h // oh)
            x0, x1 = z * w // ow, -(-(z + 1) * w // ow)
            out[:, :, y, z] = fn(x[:, :, y0:y1, x0:x1], axis=(2, 3))
    return out


def conv3d_ref(x, w, stride, pads, dilation, groups=1):
    """Direct NCDHW x OIDHW convolution, one kernel tap at a time, in float64."""
    sd, sh, sw = stride
    dd, dh, dw = dilation
    pf, pt, pl, pk, pb, pr = pads
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pf, pk), (pt, pb), (pl, pr)))
    n, c, d, h, wd = xp.shape
    f, cg, kd, kh, kw = w.shape
    od = (d - (kd - 1) * dd - 1) // sd + 1
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, f, od, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg].astype("float64")
        for i, j, k in itertools.product(range(kd), range(kh), range(kw)):
            patch = xs[:, :, i * dd:i * dd + (od - 1) * sd + 1:sd,
                       j * dh:j * dh + (oh - 1) * sh + 1:sh,
                       k * dw:k * dw + (ow - 1) * sw + 1:sw]
            out[:, g * fg:(g + 1) * fg] += np.einsum("ncdhw,fc->nfdhw", patch, ws[:, :, i, j, k])
    return out
