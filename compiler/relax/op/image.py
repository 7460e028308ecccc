"""image.resize2d: resize the H and W of NCHW data to `size`.

method: "nearest_neighbor" ("nearest"), "linear" (bilinear) or "cubic"; coordinate
transformation (output index -> input coordinate, per ONNX Resize and TVM): "half_pixel",
"pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"; rounding of
nearest_neighbor: "round" (half away from zero), "round_prefer_floor", "round_prefer_ceil",
"floor", "ceil" ("" means round). cubic uses `cubic_alpha` and, with `cubic_exclude`, drops
taps outside the input and renormalizes the weights.
"""
from __future__ import annotations

from ..expr import Call
from ..struct_info import StructInfo, TensorStructInfo, as_dtype_str
from .manipulate import as_shape_expr
from .pattern import INJECTIVE
from .registry import fail, make_call, register, tensor_arg

METHODS = ("nearest_neighbor", "linear", "cubic")
COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn")
ROUNDING = ("", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _infer_resize2d(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    a = call.attrs
    if a.layout != "NCHW":
        raise fail(call, f"only layout='NCHW' is supported, got {a.layout!r}")
    if a.method not in METHODS:
        raise fail(call, f"method must be one of {METHODS}, got {a.method!r}")
    if a.coordinate_transformation_mode not in COORDS:
        raise fail(call, f"coordinate_transformation_mode must be one of {COORDS}, got "
                         f"{a.coordinate_transformation_mode!r}")
    if a.rounding_method not in ROUNDING:
        raise fail(call, f"rounding_method must be one of {ROUNDING}, got "
                         f"{a.rounding_method!r}")
    if s.ndim not in (-1, 4):
        raise fail(call, f"data must be 4-D (NCHW), got {s.ndim} dims")
    size = call.args[1].struct_info
    values = getattr(size, "values", None)
    if values is None or len(values) != 2:
        raise fail(call, f"size must be a shape of 2 values (height, width), got {size}")
    dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, dtype, 4)
    return TensorStructInfo(s.shape[:2] + tuple(values), dtype)


register("relax.image.resize2d", _infer_resize2d, ("data", "size"),
         {"roi": (0.0, 0.0, 0.0, 0.0), "layout": "NCHW", "method": "linear",
          "coordinate_transformation_mode": "half_pixel", "rounding_method": "round",
          "cubic_alpha": -0.5, "cubic_exclude": 0, "extrapolation_value": 0.0,
          "out_dtype": "void"}, pattern=INJECTIVE)


def resize2d(data, size, roi=None, layout: str = "NCHW", method: str = "linear",
             coordinate_transformation_mode: str = "half_pixel",
             rounding_method: str = "round", cubic_alpha: float = -0.5, cubic_exclude: int = 0,
             extrapolation_value: float = 0.0, out_dtype=None) -> Call:
    if isinstance(size, int):
        size = (size, size)
    if method == "nearest":
        method = "nearest_neighbor"
    if method == "bilinear":
        method = "linear"
    if roi is None:
        roi = (0.0, 0.0, 0.0, 0.0)
    return make_call("relax.image.resize2d", (data, as_shape_expr(size)),
                     roi=tuple(float(r) for r in roi), layout=layout, method=method,
                     coordinate_transformation_mode=coordinate_transformation_mode,
                     rounding_method=rounding_method, cubic_alpha=float(cubic_alpha),
                     cubic_exclude=int(cubic_exclude),
                     extrapolation_value=float(extrapolation_value),
                     out_dtype=as_dtype_str(out_dtype))
