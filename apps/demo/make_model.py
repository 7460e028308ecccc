"""The demo's model: a small CNN (conv + batch norm + relu, max pool, a residual block, a strided
block with a projection shortcut, global average pool, dense, softmax) written as ONNX with
deterministic weights (the builders of compiler/frontend/testing/onnx_models.py), and its
input, saved beside it. No downloads.

    python apps/demo/make_model.py OUT_DIR   # OUT_DIR/cnn.onnx, input.npz and x.bin (raw)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SIZE, CLASSES = 32, 10


def small_cnn():

    from compiler.frontend.testing.onnx_models import _Graph

    g = _Graph(seed=7)
    y = g.node("Relu", [g.conv_bn("x", "stem", 3, 16, 3)])
    y = g.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])          # 16x16
    r = g.node("Relu", [g.conv_bn(y, "b1c1", 16, 16, 3)])                   # residual block
    y = g.node("Relu", [g.node("Add", [g.conv_bn(r, "b1c2", 16, 16, 3), y])])
    r = g.node("Relu", [g.conv_bn(y, "b2c1", 16, 32, 3, stride=2)])         # 8x8, projection
    r = g.conv_bn(r, "b2c2", 32, 32, 3)
    y = g.node("Relu", [g.node("Add", [r, g.conv_bn(y, "b2proj", 16, 32, 1, stride=2)])])
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.node("Softmax", [g.dense(y, "fc", 32, CLASSES)], axis=1)
    model = g.model("small_cnn", {"x": (1, 3, SIZE, SIZE)}, out, 13)
    return model


def main(out_dir):
    import onnx

    os.makedirs(out_dir, exist_ok=True)
    onnx.save(small_cnn(), os.path.join(out_dir, "cnn.onnx"))
    x = np.random.default_rng(0).standard_normal((1, 3, SIZE, SIZE)).astype("float32")
    np.savez(os.path.join(out_dir, "input.npz"), x=x)
    x.tofile(os.path.join(out_dir, "x.bin"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/demo")
