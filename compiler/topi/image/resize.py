"""image.resize2d in NCHW: nearest neighbour, bilinear and bicubic, with the coordinate modes
half_pixel, pytorch_half_pixel, align_corners, asymmetric and tf_half_pixel_for_nn (tag
INJECTIVE).

Bicubic (ONNX Resize mode "cubic", TVM's resize2d "cubic"): output position x samples input
coordinate s = floor(s) + t through the taps floor(s) - 1 .. floor(s) + 2, weighted by Keys'
kernel with parameter A at the distances t + 1, t, 1 - t, 2 - t; taps past the edge read the
edge value, or, with `bicubic_exclude`, get weight 0 and the remaining weights are divided by
their sum. Rows and columns are weighted alike (the kernel is separable)."""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError, UnsupportedOpError
from ...tir import expr as E
from .. import tag
from ..nn.utils import pair
from ..utils import get_const_tuple

_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn")
_ROUNDING = ("round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def _source_coord(x, in_size: int, out_size: int, mode: str):
    """The input coordinate (float32) that output coordinate `x` samples."""
    xf = x.astype("float32")
    f = E.make_const
    if mode == "align_corners":
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        return xf * f("float32", scale)
    scale = f("float32", in_size / out_size)
    if mode == "asymmetric":
        return xf * scale
    if mode == "pytorch_half_pixel" and out_size == 1:
        return f("float32", 0.0)
    if mode == "tf_half_pixel_for_nn":
        return (xf + f("float32", 0.5)) * scale
    return (xf + f("float32", 0.5)) * scale - f("float32", 0.5)


def _round(v, method: str):
    half = E.make_const("float32", 0.5)
    if method == "floor":
        return te.floor(v)
    if method == "ceil":
        return te.ceil(v)
    if method == "round_prefer_floor":
        return te.ceil(v - half)
    return te.floor(v + half)  # "round" and "round_prefer_ceil": halves go up


def _clamp(i, size: int):
    return E.Min(E.Max(i, E.const(0)), E.const(size - 1))


def _cubic_taps(coord, size: int, a: float, exclude: int):
    """(indices, weights) of the 4 taps of input coordinate `coord` along an axis of `size`."""
    f = E.make_const
    base = te.floor(coord)
    t = coord - base
    i0 = base.astype("int32")
    one, two = f("float32", 1.0), f("float32", 2.0)

    def near(d):        # |d| <= 1
        return ((f("float32", a + 2) * d - f("float32", a + 3)) * d) * d + one

    def far(d):         # 1 <= |d| <= 2
        return ((f("float32", a) * d - f("float32", 5 * a)) * d + f("float32", 8 * a)) * d \
            - f("float32", 4 * a)

    weights = [far(t + one), near(t), near(one - t), far(two - t)]
    raw = [i0 + k for k in (-1, 0, 1, 2)]
    if exclude:
        zero = f("float32", 0.0)
        weights = [te.if_then_else(te.all(i >= 0, i < size), wk, zero)
                   for i, wk in zip(raw, weights)]
        norm = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [wk / norm for wk in weights]
    return [_clamp(i, size) for i in raw], weights


def resize2d(data, roi, size, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="",
             bicubic_alpha=-0.5, bicubic_exclude=0, extrapolation_value=0.0, out_dtype=None,
             output_shape=None, separable=False):
    """`data` resized to `size` (out_h, out_w). method: "nearest_neighbor" (or "nearest"),
    "linear" (or "bilinear") or "cubic" (or "bicubic"; Keys' kernel with A = bicubic_alpha,
    taps outside the input dropped with bicubic_exclude); rounding_method (nearest only)
    defaults to "round" under align_corners and "floor" otherwise.
    `separable` (bilinear, taller output than input): every input row is first interpolated
    along the width into a stage of its own (tag ROWS_TAG, [n, c, in_h, out_w]), and each
    output row blends two of those rows: the same arithmetic in the same order (the same
    result, to the rounding of a contracted multiply-add), a quarter of the gathers, and
    contiguous rows to vectorize; a schedule computes the stage per (n, c)
    (topi.x86.schedule_resize2d), else it is inlined."""
    if layout != "NCHW":
        raise UnsupportedOpError(f"resize2d: layout {layout} is not supported; use NCHW")
    if method == "nearest":
        method = "nearest_neighbor"
    if method == "bicubic":
        method = "cubic"
    if method not in ("nearest_neighbor", "linear", "bilinear", "cubic"):
        raise UnsupportedOpError(f"resize2d: method '{method}' is not supported (nearest_neighbor, "
                                 "linear or cubic)")
    mode = coordinate_transformation_mode
    if mode not in _MODES:
        raise UnsupportedOpError(f"resize2d: coordinate_transformation_mode '{mode}' is not one "
                                 f"of {', '.join(_MODES)}")
    if not rounding_method:
        rounding_method = "round" if mode == "align_corners" else "floor"
    if rounding_method not in _ROUNDING:
        raise IRError(f"resize2d: rounding_method '{rounding_method}' is not one of "
                      f"{', '.join(_ROUNDING)}")
    if data.ndim != 4:
        raise IRError("resize2d: the input must be 4-d NCHW")
    n, c, h, w = get_const_tuple(data.shape)
    if not isinstance(h, int) or not isinstance(w, int):
        raise IRError("resize2d: needs static input height and width")
    oh, ow = pair(tuple(get_const_tuple(size)), "size")
    out_dtype = as_dtype(out_dtype or data.dtype)

    def conv(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    if method == "nearest_neighbor":
        def nearest(b, ch, y, x):
            iy = _round(_source_coord(y, h, oh, mode), rounding_method).astype("int32")
            ix = _round(_source_coord(x, w, ow, mode), rounding_method).astype("int32")
            return conv(data[b, ch, _clamp(iy, h), _clamp(ix, w)])

        return te.compute((data.shape[0], data.shape[1], oh, ow), nearest, name="T_resize",
                          tag=tag.INJECTIVE)

    if method == "cubic":
        def cubic(b, ch, y, x):
            ys, wy = _cubic_taps(_source_coord(y, h, oh, mode), h, bicubic_alpha,
                                 bicubic_exclude)
            xs, wx = _cubic_taps(_source_coord(x, w, ow, mode), w, bicubic_alpha,
                                 bicubic_exclude)
            total = None
            for yy, vy in zip(ys, wy):
                row = None
                for xx, vx in zip(xs, wx):
                    term = data[b, ch, yy, xx].astype("float32") * vx
                    row = term if row is None else row + term
                total = row * vy if total is None else total + row * vy
            if out_dtype.is_integer:
                total = te.floor(total + E.make_const("float32", 0.5))
            return total.astype(out_dtype)

        return te.compute((data.shape[0], data.shape[1], oh, ow), cubic, name="T_resize",
                          tag=tag.INJECTIVE)

    if separable and oh > h:
        return _separable_linear(data, h, w, oh, ow, mode, out_dtype)

    def linear(b, ch, y, x):
        sy, sx = _source_coord(y, h, oh, mode), _source_coord(x, w, ow, mode)
        fy, fx = te.floor(sy), te.floor(sx)
        y0, x0 = fy.astype("int32"), fx.astype("int32")
        wy, wx = sy - fy, sx - fx
        one = E.make_const("float32", 1.0)

        def px(yy, xx):
            return data[b, ch, _clamp(yy, h), _clamp(xx, w)].astype("float32")

        top = px(y0, x0) * (one - wx) + px(y0, x0 + 1) * wx
        bottom = px(y0 + 1, x0) * (one - wx) + px(y0 + 1, x0 + 1) * wx
        return (top * (one - wy) + bottom * wy).astype(out_dtype)

    return te.compute((data.shape[0], data.shape[1], oh, ow), linear, name="T_resize",
                      tag=tag.INJECTIVE)


ROWS_TAG = "resize_rows"


def _separable_linear(data, h: int, w: int, oh: int, ow: int, mode: str, out_dtype):
    """Bilinear resize2d in two stages (see resize2d's `separable`)."""
    one = E.make_const("float32", 1.0)

    def row(b, ch, yy, x):
        sx = _source_coord(x, w, ow, mode)
        fx = te.floor(sx)
        x0, wx = fx.astype("int32"), sx - fx
        left = data[b, ch, yy, _clamp(x0, w)].astype("float32")
        right = data[b, ch, yy, _clamp(x0 + 1, w)].astype("float32")
        return left * (one - wx) + right * wx

    rows = te.compute((data.shape[0], data.shape[1], h, ow), row, name="T_resize_rows",
                      tag=ROWS_TAG)

    def blend(b, ch, y, x):
        sy = _source_coord(y, h, oh, mode)
        fy = te.floor(sy)
        y0, wy = fy.astype("int32"), sy - fy
        top, bottom = rows[b, ch, _clamp(y0, h), x], rows[b, ch, _clamp(y0 + 1, h), x]
        return (top * (one - wy) + bottom * wy).astype(out_dtype)

    return te.compute((data.shape[0], data.shape[1], oh, ow), blend, name="T_resize",
                      tag=tag.INJECTIVE)
