"""Whole models built with the BlockBuilder, each with a hand-written numpy reference, for
tests and benchmarks of every stage after the graph level (interpreter, legalization,
relay.build, the VM):

    m = models.conv_bn_relu_pool_dense()
    inputs = m.inputs(seed=0)                     # {name: array}
    expected = m.reference(inputs)                # numpy, written independently of the IR
    out = interpreter.run(m.mod, *m.args(inputs)) # inputs then weights, in parameter order

Each `Model` holds the module, its weights (`params`, parameters after the inputs, as
`relay.build(mod, target, params)` takes them), the input shapes and the reference. The
reference code below uses plain loops over output positions, independent of the
interpreter's kernels.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import numpy as np

from ...ir.module import IRModule
from .. import op
from ..block_builder import BlockBuilder
from ..expr import Var, const
from ..struct_info import TensorStructInfo

Arrays = Dict[str, np.ndarray]


@dataclass
class Model:
    name: str
    mod: IRModule
    params: Arrays
    input_shapes: Dict[str, Tuple[int, ...]]
    reference_fn: Callable[[Arrays, Arrays], np.ndarray]
    input_names: List[str]

    def inputs(self, seed: int = 0) -> Arrays:
        rng = np.random.default_rng(seed)
        return {k: rng.standard_normal(s).astype("float32") for k, s in self.input_shapes.items()}

    def args(self, inputs: Arrays) -> List[np.ndarray]:
        """The function's arguments: inputs, then weights, in parameter order."""
        names = [p.name_hint for p in self.mod["main"].params]
        values = {**self.params, **inputs}
        return [values[n] for n in names]

    def reference(self, inputs: Arrays) -> np.ndarray:
        return self.reference_fn(inputs, self.params)


class _Weights:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.values: Arrays = {}
        self.vars: List[Var] = []

    def __call__(self, name: str, shape, scale: float = 0.3, positive: bool = False) -> Var:
        v = self.rng.standard_normal(shape) * scale
        if positive:
            v = np.abs(v) + 0.5
        self.values[name] = v.astype("float32")
        var = Var(name, TensorStructInfo(tuple(shape), "float32"))
        self.vars.append(var)
        return var


def _build(name: str, inputs: Dict[str, Tuple[int, ...]], body, ref, seed: int = 1) -> Model:
    bb = BlockBuilder()
    w = _Weights(seed)
    xs = [Var(n, TensorStructInfo(s, "float32")) for n, s in inputs.items()]
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": len(xs)})
    with bb.dataflow():
        out = bb.emit_output(body(bb, w, *xs))
    bb.emit_func_output(out, xs + w.vars)
    return Model(name, bb.get(), w.values, dict(inputs), ref, list(inputs))


# ---- numpy references (loops over output positions) ------------------------------------------
def np_conv2d(x, w, stride=1, pad=0, groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))).astype(np.float64)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                         j * stride:j * stride + kw]
                out[:, oc, i, j] = np.tensordot(win, w[oc], axes=([1, 2, 3], [0, 1, 2]))
    return out


def np_batch_norm(x, gamma, beta, mean, var, eps=1e-5):
    s = (1, -1, 1, 1)
    return (x - mean.reshape(s)) / np.sqrt(var.reshape(s) + eps) * gamma.reshape(s) + \
        beta.reshape(s)


def np_max_pool(x, k, stride):
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = x[:, :, i * stride:i * stride + k, j * stride:j * stride + k] \
                .max(axis=(2, 3))
    return out


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _relu(x):
    return np.maximum(x, 0)


# ---- models ---------------------------------------------------------------------------------
def mlp(batch: int = 4, features: int = 32, hidden: int = 64, classes: int = 10) -> Model:
    """dense + bias + relu, dense + bias, softmax."""
    def body(bb, w, x):
        h = bb.emit(op.nn.relu(op.linear(x, w("w1", (hidden, features)), w("b1", (hidden,)))))
        return op.nn.softmax(op.linear(h, w("w2", (classes, hidden)), w("b2", (classes,))))

    def ref(i, p):
        h = _relu(i["x"] @ p["w1"].T + p["b1"])
        return np_softmax(h @ p["w2"].T + p["b2"])
    return _build("mlp", {"x": (batch, features)}, body, ref)


def conv_bn_relu_pool_dense(batch: int = 2, channels: int = 3, size: int = 16,
                            filters: int = 8, classes: int = 10) -> Model:
    """conv 3x3 pad 1, batch_norm, relu, max_pool 2x2, flatten, dense + bias, softmax."""
    flat = filters * (size // 2) ** 2

    def body(bb, w, x):
        y = op.nn.conv2d(x, w("conv_w", (filters, channels, 3, 3)), padding=1)
        bn = bb.emit(op.nn.batch_norm(y, w("gamma", (filters,)), w("beta", (filters,)),
                                      w("mean", (filters,)), w("var", (filters,), positive=True)))
        y = op.nn.max_pool2d(op.nn.relu(bn[0]), pool_size=2, strides=2)
        y = op.reshape(y, (0, -1))
        return op.nn.softmax(op.linear(y, w("fc_w", (classes, flat), 0.05), w("fc_b", (classes,))))

    def ref(i, p):
        y = np_conv2d(i["x"], p["conv_w"], pad=1)
        y = _relu(np_batch_norm(y, p["gamma"], p["beta"], p["mean"], p["var"]))
        y = np_max_pool(y, 2, 2).reshape(batch, -1)
        return np_softmax(y @ p["fc_w"].T + p["fc_b"])
    return _build("conv_bn_relu_pool_dense", {"x": (batch, channels, size, size)}, body, ref)


def residual_block(batch: int = 2, channels: int = 8, size: int = 8) -> Model:
    """relu(bn(conv(relu(bn(conv(x))))) + x), 3x3 convs with padding 1."""
    c = channels

    def bn(w, y, tag):
        return op.nn.batch_norm(y, w(f"{tag}_gamma", (c,)), w(f"{tag}_beta", (c,)),
                                w(f"{tag}_mean", (c,)), w(f"{tag}_var", (c,), positive=True))

    def body(bb, w, x):
        y = bb.emit(bn(w, op.nn.conv2d(x, w("conv1_w", (c, c, 3, 3), 0.2), padding=1), "bn1"))
        y = op.nn.relu(y[0])
        y = bb.emit(bn(w, op.nn.conv2d(y, w("conv2_w", (c, c, 3, 3), 0.2), padding=1), "bn2"))
        return op.nn.relu(op.add(y[0], x))

    def ref(i, p):
        def bnr(y, t):
            return np_batch_norm(y, p[f"{t}_gamma"], p[f"{t}_beta"], p[f"{t}_mean"],
                                 p[f"{t}_var"])
        y = _relu(bnr(np_conv2d(i["x"], p["conv1_w"], pad=1), "bn1"))
        y = bnr(np_conv2d(y, p["conv2_w"], pad=1), "bn2")
        return _relu(y + i["x"])
    return _build("residual_block", {"x": (batch, c, size, size)}, body, ref)


def depthwise_separable_block(batch: int = 2, channels: int = 8, size: int = 8,
                              filters: int = 16) -> Model:
    """depthwise 3x3 conv (groups = channels, stride 2, pad 1), bn, relu; pointwise 1x1 conv,
    relu."""
    c = channels

    def body(bb, w, x):
        y = op.nn.conv2d(x, w("dw_w", (c, 1, 3, 3)), strides=2, padding=1, groups=c)
        bn = bb.emit(op.nn.batch_norm(y, w("gamma", (c,)), w("beta", (c,)), w("mean", (c,)),
                                      w("var", (c,), positive=True)))
        y = op.nn.relu(bn[0])
        return op.nn.relu(op.nn.conv2d(y, w("pw_w", (filters, c, 1, 1))))

    def ref(i, p):
        y = np_conv2d(i["x"], p["dw_w"], stride=2, pad=1, groups=c)
        y = _relu(np_batch_norm(y, p["gamma"], p["beta"], p["mean"], p["var"]))
        return _relu(np_conv2d(y, p["pw_w"]))
    return _build("depthwise_separable_block", {"x": (batch, c, size, size)}, body, ref)


def attention_block(batch: int = 2, seq: int = 8, dim: int = 16, heads: int = 2) -> Model:
    """Pre-norm self-attention: layer_norm, q/k/v projections (matmul + bias), split heads
    (reshape + permute_dims), softmax(q k^T / sqrt(d)) v, merge heads, output projection,
    residual."""
    dh = dim // heads

    def body(bb, w, x):
        h = bb.emit(op.nn.layer_norm(x, w("ln_g", (dim,), positive=True), w("ln_b", (dim,)),
                                     axes=-1))

        def proj(name):
            y = op.add(op.matmul(h, w(f"{name}_w", (dim, dim))), w(f"{name}_b", (dim,)))
            return op.permute_dims(op.reshape(y, (batch, seq, heads, dh)), (0, 2, 1, 3))
        q, k, v = bb.emit(proj("q")), bb.emit(proj("k")), bb.emit(proj("v"))
        scores = op.divide(op.matmul(q, op.permute_dims(k, (0, 1, 3, 2))),
                           const(math.sqrt(dh), "float32"))
        att = op.matmul(op.nn.softmax(scores, axis=-1), v)
        merged = op.reshape(op.permute_dims(att, (0, 2, 1, 3)), (batch, seq, dim))
        out = op.add(op.matmul(merged, w("o_w", (dim, dim))), w("o_b", (dim,)))
        return op.add(out, x)

    def ref(i, p):
        x = i["x"].astype(np.float64)
        h = np_layer_norm(x, p["ln_g"], p["ln_b"])

        def proj(n):
            y = h @ p[f"{n}_w"] + p[f"{n}_b"]
            return y.reshape(batch, seq, heads, dh).transpose(0, 2, 1, 3)
        q, k, v = proj("q"), proj("k"), proj("v")
        att = np_softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)) @ v
        merged = att.transpose(0, 2, 1, 3).reshape(batch, seq, dim)
        return merged @ p["o_w"] + p["o_b"] + x
    return _build("attention_block", {"x": (batch, seq, dim)}, body, ref)


ALL = (mlp, conv_bn_relu_pool_dense, residual_block, depthwise_separable_block, attention_block)
