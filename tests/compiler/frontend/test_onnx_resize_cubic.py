"""Resize with mode "cubic" from ONNX against onnxruntime: cubic_coeff_a, exclude_outside and
the coordinate transformation modes, by sizes and by scales, interpreted and compiled (llvm)."""
import numpy as np
import pytest
from kiln_onnx_backend import compile_model
from onnx_cases import check, node_model, ort_run, rand

from compiler.frontend import from_onnx


@pytest.mark.parametrize("coord", ["half_pixel", "pytorch_half_pixel", "align_corners",
                                   "asymmetric"])
@pytest.mark.parametrize("a,exclude", [(-0.75, 0), (-0.5, 1)])
@pytest.mark.parametrize("sizes", [(1, 2, 9, 14), (1, 2, 4, 3)], ids=["up", "down"])
def test_resize_cubic(coord, a, exclude, sizes):
    x = rand(1, 2, 6, 7)
    inputs = {"x": x, "roi": np.zeros(0, "float32"), "scales": np.zeros(0, "float32"),
              "sizes": np.array(sizes, "int64")}
    model = node_model("Resize", inputs, dict(mode="cubic", cubic_coeff_a=a,
                                             exclude_outside=exclude,
                                             coordinate_transformation_mode=coord),
                       opset=13, weights=["roi", "scales", "sizes"])
    check(model, {"x": x}, rtol=1e-4, atol=1e-5)
    mod, params = from_onnx(model)
    got = compile_model(mod, params).run({"x": x})[0]
    np.testing.assert_allclose(got, ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_resize_cubic_by_scales():
    x = rand(1, 3, 5, 4)
    inputs = {"x": x, "roi": np.zeros(0, "float32"),
              "scales": np.array([1, 1, 2, 3], "float32")}
    model = node_model("Resize", inputs, dict(mode="cubic"), opset=13,
                       weights=["roi", "scales"])
    mod, params = from_onnx(model)
    got = compile_model(mod, params).run({"x": x})[0]
    np.testing.assert_allclose(got, ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-5)
