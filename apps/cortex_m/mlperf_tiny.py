"""The four MLPerf Tiny v1.0 reference models as ONNX, built here from their published layer
shapes with random weights (nothing is downloaded):

    kws  DS-CNN small, keyword spotting: MFCC 1x1x49x10 -> 12 classes
    ic   ResNet-8, image classification: 1x3x32x32 -> 10 classes
    vww  MobileNetV1 alpha 0.25, visual wake words: 1x3x96x96 -> 2 classes
    ad   the anomaly detection autoencoder: 1x640 -> 640

    model, input_shapes = mlperf_tiny.build("kws")

and their int8 versions, "kws_int8" and "ic_int8" (INT8_MODELS): the float model quantized by
ONNX Runtime's `quantize_static` (QDQ, int8 activations and weights, weights per output
channel, calibrated on CALIBRATION_SAMPLES inputs drawn from N(0, 1) with CALIBRATION_SEED), so
the same name always gives the same bytes.

Float32, batch 1, NCHW. Batch norm is folded into the convolution and dense weights (a
per-channel scale and a bias). Weights are drawn from N(0, 1/fan_in) (seed 0), so activations
stay of order one through the network. TensorFlow's "same" padding is written out as explicit
ONNX pads (extra row and column at the end, as TensorFlow does).
"""
from __future__ import annotations

import os
import tempfile
from typing import Dict, List, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODELS = ("kws", "ic", "vww", "ad")
# int8 (QDQ) versions of float models: name -> the float model's name.
INT8_MODELS = {"kws_int8": "kws", "ic_int8": "ic"}
CALIBRATION_SEED = 1
CALIBRATION_SAMPLES = 8
OPSET = 13


class _Net:
    """A sequential ONNX graph under construction: weights and nodes, names `<op>_<k>`."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self.count = 0

    def _name(self, op: str) -> str:
        self.count += 1
        return f"{op.lower()}_{self.count}"

    def _weight(self, name: str, shape, fan_in: int) -> str:
        w = self.rng.standard_normal(shape) / np.sqrt(fan_in)
        self.inits.append(numpy_helper.from_array(w.astype("float32"), name))
        return name

    def _bias(self, name: str, n: int) -> str:
        b = 0.1 * self.rng.standard_normal(n)
        self.inits.append(numpy_helper.from_array(b.astype("float32"), name))
        return name

    def node(self, op: str, inputs, **attrs) -> str:
        name = self._name(op)
        self.nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def conv(self, x: str, cin: int, cout: int, k: Tuple[int, int], stride: int, pads,
             group: int = 1) -> str:
        """Conv with its batch norm folded in (weights and a bias)."""
        name = self._name("conv_w")
        fan_in = cin // group * k[0] * k[1]
        w = self._weight(name, (cout, cin // group, k[0], k[1]), fan_in)
        b = self._bias(name.replace("_w", "_b"), cout)
        return self.node("Conv", [x, w, b], kernel_shape=list(k), strides=[stride, stride],
                         pads=list(pads), group=group)

    def dense(self, x: str, cin: int, cout: int) -> str:
        """Gemm (y = x W^T + b) with its batch norm folded in."""
        name = self._name("dense_w")
        w = self._weight(name, (cout, cin), cin)
        b = self._bias(name.replace("_w", "_b"), cout)
        return self.node("Gemm", [x, w, b], transB=1)

    def relu(self, x: str) -> str:
        return self.node("Relu", [x])

    def model(self, name: str, inputs: Dict[str, Tuple[int, ...]], output: str,
              out_shape: Tuple[int, ...]) -> onnx.ModelProto:
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
               for n, s in inputs.items()]
        out = helper.make_tensor_value_info(output, TensorProto.FLOAT, list(out_shape))
        graph = helper.make_graph(self.nodes, name, ins, [out], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="kiln-apps-cortex-m")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def _same(k: int, stride: int, size: int) -> Tuple[int, int]:
    """TensorFlow's "same" padding of one dimension: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


def _pads(k: Tuple[int, int], stride: int, hw: Tuple[int, int]) -> List[int]:
    (t, b), (lft, r) = _same(k[0], stride, hw[0]), _same(k[1], stride, hw[1])
    return [t, lft, b, r]


def ds_cnn() -> Tuple[onnx.ModelProto, Dict[str, Tuple[int, ...]]]:
    """DS-CNN small (keyword spotting): conv 10x4 stride 2 to 64 channels, four depthwise
    separable blocks (3x3 depthwise, 1x1 to 64), average pool, dense 12, softmax."""
    n, hw = _Net(), (49, 10)
    x = n.relu(n.conv("input", 1, 64, (10, 4), 2, _pads((10, 4), 2, hw)))
    hw = (25, 5)
    for _ in range(4):
        x = n.relu(n.conv(x, 64, 64, (3, 3), 1, _pads((3, 3), 1, hw), group=64))
        x = n.relu(n.conv(x, 64, 64, (1, 1), 1, [0, 0, 0, 0]))
    x = n.node("AveragePool", [x], kernel_shape=list(hw))
    x = n.node("Flatten", [x])
    x = n.node("Softmax", [n.dense(x, 64, 12)], axis=1)
    shapes = {"input": (1, 1, 49, 10)}
    return n.model("ds_cnn", shapes, x, (1, 12)), shapes


def resnet8() -> Tuple[onnx.ModelProto, Dict[str, Tuple[int, ...]]]:
    """ResNet-8 (image classification): conv 3x3 to 16, three residual stacks of 16, 32, 64
    channels (the last two with stride 2 and a 1x1 projection shortcut), average pool 8x8,
    dense 10, softmax."""
    n, hw = _Net(), 32
    x = n.relu(n.conv("input", 3, 16, (3, 3), 1, _pads((3, 3), 1, (hw, hw))))
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        y = n.relu(n.conv(x, cin, cout, (3, 3), stride, _pads((3, 3), stride, (hw, hw))))
        hw = -(-hw // stride)
        y = n.conv(y, cout, cout, (3, 3), 1, _pads((3, 3), 1, (hw, hw)))
        if stride != 1:
            x = n.conv(x, cin, cout, (1, 1), stride, [0, 0, 0, 0])
        x = n.relu(n.node("Add", [x, y]))
        cin = cout
    x = n.node("AveragePool", [x], kernel_shape=[hw, hw])
    x = n.node("Flatten", [x])
    x = n.node("Softmax", [n.dense(x, 64, 10)], axis=1)
    shapes = {"input": (1, 3, 32, 32)}
    return n.model("resnet8", shapes, x, (1, 10)), shapes


def mobilenet_v1_025() -> Tuple[onnx.ModelProto, Dict[str, Tuple[int, ...]]]:
    """MobileNetV1 alpha 0.25 at 96x96 (visual wake words): conv 3x3 stride 2 to 8 channels,
    13 depthwise separable blocks up to 256 channels, average pool 3x3, dense 2, softmax."""
    n, hw = _Net(), 96
    x = n.relu(n.conv("input", 3, 8, (3, 3), 2, _pads((3, 3), 2, (hw, hw))))
    hw, cin = 48, 8
    blocks = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)] + [(128, 1)] * 5 + \
        [(256, 2), (256, 1)]
    for cout, stride in blocks:
        x = n.relu(n.conv(x, cin, cin, (3, 3), stride, _pads((3, 3), stride, (hw, hw)),
                          group=cin))
        hw = -(-hw // stride)
        x = n.relu(n.conv(x, cin, cout, (1, 1), 1, [0, 0, 0, 0]))
        cin = cout
    x = n.node("AveragePool", [x], kernel_shape=[hw, hw])
    x = n.node("Flatten", [x])
    x = n.node("Softmax", [n.dense(x, 256, 2)], axis=1)
    shapes = {"input": (1, 3, 96, 96)}
    return n.model("mobilenet_v1_025", shapes, x, (1, 2)), shapes


def autoencoder() -> Tuple[onnx.ModelProto, Dict[str, Tuple[int, ...]]]:
    """The anomaly detection autoencoder: dense 640-128-128-128-128-8-128-128-128-128-640,
    batch norm and ReLU after every layer but the last."""
    n = _Net()
    widths = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]
    x = "input"
    for k, (cin, cout) in enumerate(zip(widths, widths[1:])):
        x = n.dense(x, cin, cout)
        if k < len(widths) - 2:
            x = n.relu(x)
    shapes = {"input": (1, 640)}
    return n.model("ad_autoencoder", shapes, x, (1, 640)), shapes


BUILDERS = {"kws": ds_cnn, "ic": resnet8, "vww": mobilenet_v1_025, "ad": autoencoder}


def calibration_set(shapes: Dict[str, Tuple[int, ...]]) -> List[Dict[str, np.ndarray]]:
    """CALIBRATION_SAMPLES feeds of N(0, 1) float32 inputs of `shapes`, from CALIBRATION_SEED
    (the inputs the float models are built for: weights from N(0, 1/fan_in) keep activations of
    order one)."""
    rng = np.random.default_rng(CALIBRATION_SEED)
    return [{k: rng.standard_normal(s).astype("float32") for k, s in shapes.items()}
            for _ in range(CALIBRATION_SAMPLES)]


def quantize(model: onnx.ModelProto, shapes: Dict[str, Tuple[int, ...]]) -> onnx.ModelProto:
    """`model` quantized by onnxruntime.quantization.quantize_static: QDQ, int8 activations
    (asymmetric) and int8 weights (symmetric, per output channel), on calibration_set(shapes)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class _Feeds(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(calibration_set(shapes))

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "int8.onnx")
        onnx.save(model, src)
        quantize_static(src, dst, _Feeds(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
        return onnx.load(dst)


def build(name: str) -> Tuple[onnx.ModelProto, Dict[str, Tuple[int, ...]]]:
    """(ONNX model, input shapes) of one of MODELS or INT8_MODELS."""
    if name in INT8_MODELS:
        model, shapes = BUILDERS[INT8_MODELS[name]]()
        return quantize(model, shapes), shapes
    if name not in BUILDERS:
        raise SystemExit(f"unknown model {name!r}: use one of "
                         f"{', '.join(MODELS + tuple(INT8_MODELS))}")
    return BUILDERS[name]()
