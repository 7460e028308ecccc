"""image.resize2d in NCHW: nearest neighbour and bilinear, with the coordinate modes
half_pixel, pytorch_half_pixel, align_corners and asymmetric (tag INJECTIVE)."""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError, UnsupportedOpError
from ...tir import expr as E
from .. import tag
from ..nn.utils import pair
from ..utils import get_const_tuple

_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
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


def resize2d(data, roi, size, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="",
             bicubic_alpha=-0.5, bicubic_exclude=0, extrapolation_value=0.0, out_dtype=None,
             output_shape=None):
    """`data` resized to `size` (out_h, out_w). method: "nearest_neighbor" (or "nearest") or
    "linear"; rounding_method (nearest only) defaults to "round" under align_corners and
    "floor" otherwise."""
    if layout != "NCHW":
        raise UnsupportedOpError(f"resize2d: layout {layout} is not supported; use NCHW")
    if method == "nearest":
        method = "nearest_neighbor"
    if method not in ("nearest_neighbor", "linear", "bilinear"):
        raise UnsupportedOpError(f"resize2d: method '{method}' is not supported (nearest_neighbor "
                                 "or linear)")
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
