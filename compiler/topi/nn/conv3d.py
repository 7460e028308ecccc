"""3-d convolution in NCDHW: conv3d_ncdhw (groups included).

As the 2-d convolutions: padding is a separate nn.pad stage ("injective,pad", absent without
padding) and the result is a compute tagged "conv3d_ncdhw" whose output axes are
(n, channel, z, y, x); the x86 schedule relies on that shape.

Float32 sums of many terms lose accuracy as they grow (a 3x3x3 kernel over 64 channels sums
1728 products), so the reduction runs in two levels: partial sums of about CONV3D_CHUNK_TERMS
terms each (a chunk of input channels by the whole kernel window), tagged PARTIAL_TAG with a
last axis over the chunks, then the sum of the partial sums (the "conv3d_ncdhw" compute). A
reduction that fits one chunk is a single compute. ONNX Runtime's convolution (an im2col
GEMM) blocks its sums alike.
"""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ..utils import divisor_at_most, get_const_tuple
from .pad import pad
from .utils import conv_out_size

# Products per partial sum (at most, where the kernel window allows; at least one window).
CONV3D_CHUNK_TERMS = 256
# The tag of the partial sums of a two-level conv3d_ncdhw.
PARTIAL_TAG = "conv3d_ncdhw_partial"


def _triple(v, what: str) -> tuple:
    if isinstance(v, int):
        return v, v, v
    v = tuple(int(x) for x in v)
    if len(v) != 3:
        raise IRError(f"{what} must be an int or 3 values (d, h, w), got {v}")
    return v


def get_pad_tuple3d(padding) -> tuple:
    """(front, top, left, back, bottom, right) from an int, (d, h, w) or those 6 values."""
    if isinstance(padding, int):
        return (padding,) * 6
    padding = tuple(int(p) for p in padding)
    if len(padding) == 3:
        return padding + padding
    if len(padding) == 6:
        return padding
    raise IRError(f"padding {padding} must be an int, 3 values (d, h, w) or 6 values "
                  "(front, top, left, back, bottom, right)")


def _static(shape, what):
    out = get_const_tuple(shape)
    if not all(isinstance(s, int) for s in out):
        raise IRError(f"{what}: needs static shapes, got {[str(s) for s in shape]}")
    return out


def conv3d_ncdhw(Input, Filter, stride, padding, dilation, groups=1, out_dtype=None):
    """Input [N, C, D, H, W], Filter [F, C / groups, KD, KH, KW] -> [N, F, OD, OH, OW]
    (tag "conv3d_ncdhw"). padding: int, (d, h, w) or (front, top, left, back, bottom, right);
    stride, dilation: int or (d, h, w). Output channel f reads the input channels of group
    f // (F / groups)."""
    name = "conv3d_ncdhw"
    if Input.ndim != 5 or Filter.ndim != 5:
        raise IRError(f"{name}: input and filter must be 5-d (NCDHW and OIDHW)")
    out_dtype = as_dtype(out_dtype or Input.dtype)
    n, c, d, h, w = _static(Input.shape, name)
    f, cg, kd, kh, kw = _static(Filter.shape, name)
    if groups < 1 or c % groups or f % groups:
        raise IRError(f"{name}: groups={groups} must divide the input channels ({c}) and the "
                      f"output channels ({f})")
    if cg * groups != c:
        raise IRError(f"{name}: the filter has {cg} input channels per group, but the input "
                      f"has {c} channels in {groups} groups ({c // groups} each)")
    sd, sh, sw = _triple(stride, "stride")
    dd, dh, dw = _triple(dilation, "dilation")
    pf, pt, pl, pk, pb, pr = get_pad_tuple3d(padding)
    od = conv_out_size(d, kd, sd, pf + pk, dd)
    oh = conv_out_size(h, kh, sh, pt + pb, dh)
    ow = conv_out_size(w, kw, sw, pl + pr, dw)
    data = Input
    if (pf, pt, pl, pk, pb, pr) != (0,) * 6:
        data = pad(Input, (0, 0, pf, pt, pl), (0, 0, pk, pb, pr), name="pad_temp")
    rz = te.reduce_axis((0, kd), name="rz")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    fg = f // groups
    taps = kd * kh * kw
    chunk = divisor_at_most(cg, max(1, CONV3D_CHUNK_TERMS // taps))
    chunks = cg // chunk

    def acc(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    def term(b, ff, ch, z, y, x):
        ic = ch if groups == 1 else (ff // fg) * cg + ch
        return acc(data[b, ic, z * sd + rz * dd, y * sh + ry * dh, x * sw + rx * dw]) \
            * acc(Filter[ff, ch, rz, ry, rx])

    if chunks == 1:
        rc = te.reduce_axis((0, cg), name="rc")
        return te.compute((n, f, od, oh, ow),
                          lambda b, ff, z, y, x: te.sum(term(b, ff, rc, z, y, x),
                                                        axis=[rc, rz, ry, rx]),
                          name=name, tag=name)
    rc = te.reduce_axis((0, chunk), name="rc")
    partial = te.compute(
        (n, f, od, oh, ow, chunks),
        lambda b, ff, z, y, x, q: te.sum(term(b, ff, q * chunk + rc, z, y, x),
                                         axis=[rc, rz, ry, rx]),
        name=name + "_partial", tag=PARTIAL_TAG)
    rq = te.reduce_axis((0, chunks), name="rq")
    return te.compute((n, f, od, oh, ow),
                      lambda b, ff, z, y, x: te.sum(partial[b, ff, z, y, x, rq], axis=rq),
                      name=name, tag=name)
