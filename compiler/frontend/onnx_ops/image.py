"""Resize (opsets 10-19: scales or sizes, nearest / linear / cubic, the coordinate
transformations and nearest roundings of relax.image.resize2d) and Upsample (opsets 7-9), over
the H and W of NCHW data."""
from __future__ import annotations

import math

import numpy as np

from ...relax.op import image
from .common import converter

_MODES = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear",
          "cubic": "cubic"}


def _out_size(ctx, scales):
    shape = ctx.static_shape(0, "Resize with scales")
    if len(scales) != len(shape):
        raise ctx.error(f"scales {tuple(scales)} must have one value per dim of the input "
                        f"{shape}")
    return [int(math.floor(d * s + 1e-9)) for d, s in zip(shape, scales)]


def _resize(ctx, x, size, method, coord, rounding, cubic_a=-0.75, exclude=0, extrap=0.0):
    shape = ctx.shape(0)
    if len(shape) != 4:
        raise ctx.unsupported(f"a {len(shape)}-D input (4-D NCHW is)")
    if list(size[:2]) != list(shape[:2]):
        raise ctx.unsupported(f"resizing the batch or channel dims (to {tuple(size)})")
    return image.resize2d(x, tuple(size[2:]), method=method,
                          coordinate_transformation_mode=coord, rounding_method=rounding,
                          cubic_alpha=cubic_a, cubic_exclude=exclude, extrapolation_value=extrap)


@converter("Resize", const_inputs=(1, 2, 3))
def _resize_op(ctx):
    mode = ctx.attr("mode", "nearest")
    if mode not in _MODES:
        raise ctx.unsupported(f"mode={mode!r}")
    if int(ctx.attr("antialias", 0)):
        raise ctx.unsupported("antialias=1")
    if ctx.attr("axes") is not None:
        raise ctx.unsupported("the axes attribute")
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.unsupported(f"keep_aspect_ratio_policy="
                              f"{ctx.attr('keep_aspect_ratio_policy')!r}")
    if ctx.opset < 11:
        coord = "asymmetric"
        scales, sizes = ctx.const(1, "scales"), None
    else:
        coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
        scales = ctx.const(2, "scales") if ctx.has(2) else None
        sizes = ctx.const(3, "sizes") if ctx.has(3) else None
    if coord not in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                     "tf_half_pixel_for_nn"):
        raise ctx.unsupported(f"coordinate_transformation_mode={coord!r}")
    if sizes is not None and np.asarray(sizes).size:
        size = [int(s) for s in np.asarray(sizes).reshape(-1)]
    elif scales is not None and np.asarray(scales).size:
        size = _out_size(ctx, [float(s) for s in np.asarray(scales).reshape(-1)])
    else:
        raise ctx.error("needs scales or sizes")
    rounding = ctx.attr("nearest_mode", "round_prefer_floor") if mode == "nearest" else ""
    return _resize(ctx, ctx.input(0), size, _MODES[mode], coord, rounding,
                   float(ctx.attr("cubic_coeff_a", -0.75)), int(ctx.attr("exclude_outside", 0)),
                   float(ctx.attr("extrapolation_value", 0.0)))


@converter("Upsample", const_inputs=(1,))
def _upsample(ctx):
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise ctx.unsupported(f"mode={mode!r}")
    scales = ctx.attr("scales") if ctx.opset < 9 else ctx.const(1, "scales")
    size = _out_size(ctx, [float(s) for s in np.asarray(scales).reshape(-1)])
    rounding = "floor" if mode == "nearest" else ""
    return _resize(ctx, ctx.input(0), size, _MODES[mode], "asymmetric", rounding)
