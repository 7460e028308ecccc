"""Whole ONNX models (compiler.frontend.testing.onnx_models: an MLP, a LeNet-style CNN, a
ResNet-style network with BatchNormalization and residual blocks, a MobileNet-style network
with depthwise-separable blocks, ReLU6 Clips and global pooling, a transformer encoder block)
imported, built and run on each host target, matching onnxruntime within rtol 1e-4,
atol 1e-5 (float32)."""
import numpy as np
import pytest
from kiln_onnx_backend import compile_model
from onnx_cases import ort_run

from compiler.frontend import from_onnx
from compiler.frontend.testing import onnx_models


@pytest.mark.parametrize("make", onnx_models.ALL, ids=lambda f: f.__name__)
def test_model_matches_onnxruntime(make, target):
    m = make()
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    compiled = compile_model(mod, params, target)
    for seed in (0, 1):
        feed = m.inputs(seed)
        (want,) = ort_run(m.model, feed)
        (got,) = compiled.run(feed)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
