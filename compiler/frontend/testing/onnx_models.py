"""Whole ONNX models built with onnx.helper, with deterministic weights, for tests, the demo and
benchmarks:

    m = onnx_models.resnet_style()
    m.model                        # onnx.ModelProto (batch dim named "N")
    m.inputs(seed=0)               # {name: array} of the shapes in m.input_shapes
    mod, params = from_onnx(m.model, shape=m.input_shapes)

Models: mlp (Gemm, Relu, MatMul, Add, Softmax), lenet (Conv, Relu, MaxPool, AveragePool,
Flatten, Gemm), resnet_style (Conv + BatchNormalization + Relu, residual blocks, a strided block
with a projection shortcut, GlobalAveragePool), mobilenet_style (depthwise-separable blocks,
Clip as ReLU6, GlobalAveragePool), transformer_block (LayerNormalization, multi-head attention
with MatMul / Reshape / Transpose / Softmax, an Erf-GELU feed-forward, residuals; one Reshape's
shape computed by Shape / Gather / Concat). The batch dim of each input is named "N"
(`dim_param`); `input_shapes` binds it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclass
class OnnxModel:
    name: str
    model: onnx.ModelProto
    input_shapes: Dict[str, Tuple[int, ...]]

    def inputs(self, seed: int = 0) -> Dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        return {k: rng.standard_normal(s).astype("float32") for k, s in self.input_shapes.items()}


class _Graph:
    """Adds nodes and deterministic weights; names nodes `<op>_<k>`."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self._count: Dict[str, int] = {}

    def weight(self, name: str, shape, scale: float = 0.3, positive: bool = False) -> str:
        v = self.rng.standard_normal(shape) * scale
        if positive:
            v = np.abs(v) + 0.5
        self.inits.append(numpy_helper.from_array(v.astype("float32"), name))
        return name

    def const(self, name: str, value, dtype="float32") -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs):
        k = self._count.get(op, 0)
        self._count[op] = k + 1
        name = f"{op.lower()}_{k}"
        outs = [f"{name}_out{i}" if n_out > 1 else f"{name}_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=name, **attrs))
        return outs if n_out > 1 else outs[0]

    def model(self, name: str, inputs: Dict[str, Tuple[int, ...]], output: str,
              opset: int) -> onnx.ModelProto:
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N"] + list(s[1:]))
               for n, s in inputs.items()]
        self.nodes[-1].output[0] = "output"
        for node in self.nodes:     # the last node's result is the graph output
            for i, x in enumerate(node.input):
                if x == output:
                    node.input[i] = "output"
        out = helper.make_tensor_value_info("output", TensorProto.FLOAT, None)
        graph = helper.make_graph(self.nodes, name, ins, [out], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="kiln-tests")
        m.ir_version = 8
        return m

    # ---- blocks ---------------------------------------------------------------------------
    def conv_bn(self, x: str, tag: str, cin: int, cout: int, k: int, stride: int = 1,
                group: int = 1) -> str:
        fan_in = cin // group * k * k
        w = self.weight(f"{tag}_w", (cout, cin // group, k, k), math.sqrt(2.0 / fan_in))
        y = self.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4, group=group)
        return self.node("BatchNormalization",
                         [y, self.weight(f"{tag}_gamma", (cout,), positive=True),
                          self.weight(f"{tag}_beta", (cout,), 0.1),
                          self.weight(f"{tag}_mean", (cout,), 0.1),
                          self.weight(f"{tag}_var", (cout,), positive=True)], epsilon=1e-5)

    def dense(self, x: str, tag: str, cin: int, cout: int) -> str:
        return self.node("Gemm", [x, self.weight(f"{tag}_w", (cout, cin), 1 / math.sqrt(cin)),
                                  self.weight(f"{tag}_b", (cout,), 0.1)], transB=1)


def _finish(g: _Graph, name: str, inputs, out: str, opset: int) -> OnnxModel:
    return OnnxModel(name, g.model(name, inputs, out, opset), dict(inputs))


def mlp(batch: int = 4, features: int = 32, hidden: int = 64, classes: int = 10,
        seed: int = 1) -> OnnxModel:
    g = _Graph(seed)
    h = g.node("Relu", [g.dense("x", "fc1", features, hidden)])
    y = g.node("MatMul", [h, g.weight("fc2_w", (hidden, classes), 1 / math.sqrt(hidden))])
    y = g.node("Add", [y, g.weight("fc2_b", (classes,), 0.1)])
    out = g.node("Softmax", [y], axis=1)
    return _finish(g, "mlp", {"x": (batch, features)}, out, 13)


def lenet(batch: int = 2, size: int = 16, classes: int = 10, seed: int = 2) -> OnnxModel:
    g = _Graph(seed)
    y = g.node("Conv", ["x", g.weight("conv1_w", (6, 1, 5, 5), 0.2),
                        g.weight("conv1_b", (6,), 0.1)], kernel_shape=[5, 5], pads=[2, 2, 2, 2])
    y = g.node("MaxPool", [g.node("Relu", [y])], kernel_shape=[2, 2], strides=[2, 2])
    y = g.node("Conv", [y, g.weight("conv2_w", (16, 6, 5, 5), 0.1),
                        g.weight("conv2_b", (16,), 0.1)], kernel_shape=[5, 5])
    y = g.node("AveragePool", [g.node("Relu", [y])], kernel_shape=[2, 2], strides=[2, 2])
    y = g.node("Flatten", [y], axis=1)
    flat = 16 * ((size // 2 - 4) // 2) ** 2
    y = g.node("Relu", [g.dense(y, "fc1", flat, 32)])
    y = g.node("Relu", [g.dense(y, "fc2", 32, 24)])
    out = g.dense(y, "fc3", 24, classes)
    return _finish(g, "lenet", {"x": (batch, 1, size, size)}, out, 11)


def resnet_style(batch: int = 1, size: int = 16, classes: int = 10,
                 seed: int = 3) -> OnnxModel:
    g = _Graph(seed)
    y = g.node("Relu", [g.conv_bn("x", "stem", 3, 8, 3)])
    # a basic residual block
    r = g.node("Relu", [g.conv_bn(y, "b1c1", 8, 8, 3)])
    r = g.conv_bn(r, "b1c2", 8, 8, 3)
    y = g.node("Relu", [g.node("Add", [r, y])])
    # a strided block with a 1x1 projection shortcut
    r = g.node("Relu", [g.conv_bn(y, "b2c1", 8, 16, 3, stride=2)])
    r = g.conv_bn(r, "b2c2", 16, 16, 3)
    s = g.conv_bn(y, "b2proj", 8, 16, 1, stride=2)
    y = g.node("Relu", [g.node("Add", [r, s])])
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.dense(y, "fc", 16, classes)
    return _finish(g, "resnet_style", {"x": (batch, 3, size, size)}, out, 13)


def mobilenet_style(batch: int = 1, size: int = 16, classes: int = 10,
                    seed: int = 4) -> OnnxModel:
    g = _Graph(seed)
    lo, hi = g.const("relu6_min", 0.0), g.const("relu6_max", 6.0)

    def relu6(v):
        return g.node("Clip", [v, lo, hi])

    y = relu6(g.conv_bn("x", "stem", 3, 8, 3, stride=2))
    cin = 8
    for i, (cout, stride) in enumerate(((16, 1), (32, 2))):
        y = relu6(g.conv_bn(y, f"dw{i}", cin, cin, 3, stride=stride, group=cin))
        y = relu6(g.conv_bn(y, f"pw{i}", cin, cout, 1))
        cin = cout
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.dense(y, "fc", cin, classes)
    return _finish(g, "mobilenet_style", {"x": (batch, 3, size, size)}, out, 13)


def transformer_block(batch: int = 1, seq: int = 8, dim: int = 16, heads: int = 2,
                      ffn: int = 32, seed: int = 5) -> OnnxModel:
    g = _Graph(seed)
    dh = dim // heads

    def ln(x, tag):
        return g.node("LayerNormalization", [x, g.weight(f"{tag}_g", (dim,), positive=True),
                                             g.weight(f"{tag}_b", (dim,), 0.1)],
                      axis=-1, epsilon=1e-5)

    def linear(x, tag, cin, cout):
        y = g.node("MatMul", [x, g.weight(f"{tag}_w", (cin, cout), 1 / math.sqrt(cin))])
        return g.node("Add", [y, g.weight(f"{tag}_b", (cout,), 0.1)])

    heads_shape = g.const("heads_shape", [batch, seq, heads, dh], "int64")
    h = ln("x", "ln1")

    def split_heads(x):
        return g.node("Transpose", [g.node("Reshape", [x, heads_shape])], perm=[0, 2, 1, 3])

    q = split_heads(linear(h, "q", dim, dim))
    k = split_heads(linear(h, "k", dim, dim))
    v = split_heads(linear(h, "v", dim, dim))
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = g.node("Div", [scores, g.const("sqrt_dh", math.sqrt(dh))])
    att = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), v])
    att = g.node("Transpose", [att], perm=[0, 2, 1, 3])
    # the merged shape (batch, seq, dim) computed from the input's shape
    shape = g.node("Shape", ["x"])
    dims = [g.node("Unsqueeze", [g.node("Gather", [shape, g.const(f"i{i}", i, "int64")],
                                        axis=0), g.const(f"ax{i}", [0], "int64")])
            for i in range(3)]
    merged = g.node("Reshape", [att, g.node("Concat", dims, axis=0)])
    x1 = g.node("Add", [linear(merged, "o", dim, dim), "x"])
    f = linear(ln(x1, "ln2"), "ff1", dim, ffn)
    # gelu(f) = 0.5 f (1 + erf(f / sqrt(2)))
    e = g.node("Erf", [g.node("Div", [f, g.const("sqrt2", math.sqrt(2.0))])])
    gelu = g.node("Mul", [g.node("Mul", [f, g.const("half", 0.5)]),
                          g.node("Add", [e, g.const("one", 1.0)])])
    out = g.node("Add", [linear(gelu, "ff2", ffn, dim), x1])
    return _finish(g, "transformer_block", {"x": (batch, seq, dim)}, out, 17)


ALL = (mlp, lenet, resnet_style, mobilenet_style, transformer_block)
