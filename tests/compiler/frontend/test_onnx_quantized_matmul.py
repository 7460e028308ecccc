"""int8 MatMul-heavy models against ONNX Runtime with graph optimizations off: a transformer's
feed-forward layers (3-D by 2-D MatMul, bias, Relu, residual) quantized by
onnxruntime.quantization as QOperator (QLinearMatMul, bit-exact) and QDQ static per channel
(the quantized tensors after each MatMul bit-exact, the float output within one step of the
last DequantizeLinear), and QLinearMatMul with int8 and uint8 data about nonzero zero points
(bit-exact), on each host target: on a VNNI host the llvm build takes the packed matmul
(vpdpbusd), the c build the portable kernel."""
import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from kiln_onnx_backend import compile_model
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)

from compiler.frontend import from_onnx
from compiler.frontend.testing import onnx_models as om


def feed_forward(tokens=6, dim=32, hidden=64, seed=3):
    g = om._Graph(seed)
    h = g.node("MatMul", ["x", g.weight("a_w", (dim, hidden), 1 / math.sqrt(dim))])
    h = g.node("Relu", [g.node("Add", [h, g.weight("a_b", (hidden,), 0.1)])])
    h = g.node("MatMul", [h, g.weight("b_w", (hidden, dim), 1 / math.sqrt(hidden))])
    y = g.node("Add", [g.node("Add", [h, g.weight("b_b", (dim,), 0.1)]), "x"])
    return om._finish(g, "feed_forward", {"x": (2, tokens, dim)}, y, 13)


class _Calibration(CalibrationDataReader):
    def __init__(self, m):
        self.feeds = iter([m.inputs(seed=100 + i) for i in range(4)])

    def get_next(self):
        return next(self.feeds, None)


def _reference(model, feed):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(None, feed)


def _quantized(m, fmt, tmp):
    src, dst = tmp / "ff.onnx", tmp / "ff_q.onnx"
    onnx.save(m.model, str(src))
    quantize_static(str(src), str(dst), _Calibration(m), quant_format=fmt, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return onnx.load(str(dst))


def _with_outputs(model, names):
    out = onnx.ModelProto()
    out.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(out)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    out.graph.output.extend([helper.make_tensor_value_info(n, types[n], None) for n in names])
    return out


def test_qoperator_bit_exact(target, tmp_path):
    m = feed_forward()
    model = _quantized(m, QuantFormat.QOperator, tmp_path)
    assert "QLinearMatMul" in {n.op_type for n in model.graph.node}
    mod, params = from_onnx(model, shape=m.input_shapes)
    compiled = compile_model(mod, params, target)
    for seed in range(2):
        feed = m.inputs(seed)
        np.testing.assert_array_equal(compiled.run(feed)[0], _reference(model, feed)[0])


def test_qdq_per_channel(target, tmp_path):
    m = feed_forward()
    model = _quantized(m, QuantFormat.QDQ, tmp_path)
    producers = {o: n for n in model.graph.node for o in n.output}
    after_matmul = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"
                    and producers.get(n.input[0]) is not None
                    and producers[n.input[0]].op_type == "MatMul"]
    assert after_matmul
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    last = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1]
    step = float(inits[last.input[1]])
    model = _with_outputs(model, after_matmul)
    mod, params = from_onnx(model, shape=m.input_shapes)
    compiled = compile_model(mod, params, target)
    for seed in range(2):
        feed = m.inputs(seed)
        got, want = compiled.run(feed), _reference(model, feed)
        assert np.abs(got[0] - want[0]).max() <= step * 1.001
        for name, g, w in zip(after_matmul, got[1:], want[1:]):
            assert np.abs(g.astype(np.int32) - w.astype(np.int32)).max() == 0, name


@pytest.mark.parametrize("dtype,za", [("int8", -7), ("uint8", 131)])
def test_qlinear_matmul_3d(dtype, za, target):
    rng = np.random.default_rng(5)
    elem = TensorProto.INT8 if dtype == "int8" else TensorProto.UINT8
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    inits = [numpy_helper.from_array(np.asarray(v, t), k) for k, v, t in (
        ("sa", 0.03, "float32"), ("za", za, dtype), ("w", rng.integers(-127, 128, (30, 48)),
                                                     "int8"),
        ("sw", 0.01, "float32"), ("zw", 0, "int8"), ("sy", 0.4, "float32"),
        ("zy", 5, dtype))]
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "w", "sw", "zw", "sy", "zy"],
                            ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", elem, (2, 5, 30))],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    feed = {"a": rng.integers(lo, hi, (2, 5, 30)).astype(dtype)}
    mod, params = from_onnx(model)
    got = compile_model(mod, params, target).run(feed)[0]
    want = _reference(model, feed)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
