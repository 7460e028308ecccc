"""int8 models from onnxruntime.quantization (QDQ static per channel, QOperator, dynamic) of the
test suite's float models (compiler.frontend.testing.onnx_models, at opset 13), calibrated on
fixed random inputs, and small QDQ / QOperator graphs built with onnx.helper, against ONNX
Runtime with graph optimizations off (its reference semantics), on each host target:

- QDQ: the quantized tensors after each convolution are bit-exact, every other quantized
  tensor within 1 (a float32 rounding of ONNX Runtime's float operators crossing a half), and
  the float outputs within one quantization step of the last DequantizeLinear;
- QOperator: bit-exact (outputs and their dequantized floats);
- dynamic: float outputs within float32 rounding.
Bad parameters (a scale of 0, a zero point outside its type, per-channel lengths that do not
match) fail with a ModelError naming the node."""
import numpy as np
import onnx
import onnx.version_converter
import onnxruntime as ort
import pytest
from kiln_onnx_backend import compile_model
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

from compiler.frontend import from_onnx
from compiler.frontend.errors import ModelError
from compiler.frontend.testing import onnx_models


class _Calibration(CalibrationDataReader):
    """Fixed random inputs of the float model (seeds 100..103)."""

    def __init__(self, m):
        self.feeds = iter([m.inputs(seed=100 + i) for i in range(4)])

    def get_next(self):
        return next(self.feeds, None)


def quantized(m, kind: str, tmp) -> onnx.ModelProto:
    """Float model `m` quantized by onnxruntime.quantization: "qdq" (static, per channel),
    "qop" (static QOperator, per channel) or "dynamic"."""
    src, dst = tmp / f"{m.name}.onnx", tmp / f"{m.name}_{kind}.onnx"
    onnx.save(onnx.version_converter.convert_version(m.model, 13), str(src))
    if kind == "dynamic":
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8)
    else:
        fmt = QuantFormat.QDQ if kind == "qdq" else QuantFormat.QOperator
        quantize_static(str(src), str(dst), _Calibration(m), quant_format=fmt, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return onnx.load(str(dst))


def reference(model: onnx.ModelProto, feed):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def with_outputs(model: onnx.ModelProto, names) -> onnx.ModelProto:
    """`model` with the values `names` (of known element types) as extra graph outputs."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(out)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    out.graph.output.extend([helper.make_tensor_value_info(n, types[n], None) for n in names])
    return out


def _last_scale(model: onnx.ModelProto) -> float:
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    last = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1]
    return float(inits[last.input[1]])


def _run(model, m, target, seeds=(0, 1)):
    mod, params = from_onnx(model, shape=m.input_shapes)
    compiled = compile_model(mod, params, target)
    for seed in seeds:
        feed = m.inputs(seed)
        yield reference(model, feed), compiled.run(feed)


@pytest.mark.parametrize("make", [onnx_models.lenet, onnx_models.resnet_style,
                                  onnx_models.mobilenet_style], ids=lambda f: f.__name__)
def test_qdq_per_channel(make, target, tmp_path):
    m = make()
    model = quantized(m, "qdq", tmp_path)
    producers = {o: n for n in model.graph.node for o in n.output}
    qs = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"]
    after_conv = {q for q in qs if producers.get(producers[q].input[0], None) is not None
                  and producers[producers[q].input[0]].op_type == "Conv"}
    assert after_conv
    step = _last_scale(model)
    for want, got in _run(with_outputs(model, qs), m, target):
        assert got[0].dtype == want[0].dtype == np.float32
        assert np.abs(got[0] - want[0]).max() <= step * 1.001
        for name, w, g in zip(qs, want[1:], got[1:]):
            assert g.dtype == w.dtype, name
            diff = np.abs(g.astype(np.int32) - w.astype(np.int32))
            assert diff.max() <= (0 if name in after_conv else 1), name


@pytest.mark.parametrize("make", [onnx_models.lenet, onnx_models.resnet_style,
                                  onnx_models.mobilenet_style], ids=lambda f: f.__name__)
def test_qoperator_bit_exact(make, target, tmp_path):
    m = make()
    model = quantized(m, "qop", tmp_path)
    assert {"QLinearConv", "QGemm"} <= {n.op_type for n in model.graph.node}
    for want, got in _run(model, m, target):
        np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("make", [onnx_models.lenet, onnx_models.mlp], ids=lambda f: f.__name__)
def test_dynamic(make, target, tmp_path):
    m = make()
    model = quantized(m, "dynamic", tmp_path)
    assert "DynamicQuantizeLinear" in {n.op_type for n in model.graph.node}
    for want, got in _run(model, m, target):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


# ---- small graphs -----------------------------------------------------------------------------
def _model(nodes, inputs, outputs, inits, opset=13, ms=False):
    imports = [helper.make_opsetid("", opset)] + \
        ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(g, opset_imports=imports, producer_name="kiln-tests")
    model.ir_version = 8
    return model


def _init(name, value, dtype):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _exact(model, feed, target):
    mod, params = from_onnx(model)
    got = compile_model(mod, params, target).run(feed)
    want = reference(model, feed)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("wtype", ["int8", "uint8"])
def test_qlinear_conv_weight_zero_points(wtype, target):
    """uint8 data; int8 weights (zero point 0) or uint8 weights with per-channel zero points;
    bias; strides and padding."""
    rng = np.random.default_rng(0)
    lo, hi = (-127, 128) if wtype == "int8" else (0, 256)
    w = rng.integers(lo, hi, (6, 4, 3, 3))
    wz = np.zeros(6) if wtype == "int8" else rng.integers(100, 150, 6)
    inits = [_init("sx", 0.02, "float32"), _init("zx", 117, "uint8"), _init("w", w, wtype),
             _init("sw", rng.random(6) * 0.01 + 0.001, "float32"), _init("zw", wz, wtype),
             _init("sy", 0.05, "float32"), _init("zy", 9, "uint8"),
             _init("b", rng.integers(-3000, 3000, 6), "int32")]
    node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"],
                            ["y"], name="qconv", pads=[1, 0, 1, 2], strides=[2, 1])
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.UINT8, (2, 4, 9, 9))],
                   [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    _exact(model, {"x": rng.integers(0, 256, (2, 4, 9, 9)).astype("uint8")}, target)


def test_qlinear_elementwise_ops(target):
    """QLinearMatMul (int8), QLinearAdd, QLinearMul, QLinearSigmoid, QLinearConcat and
    QLinearGlobalAveragePool (com.microsoft), each bit-exact."""
    rng = np.random.default_rng(1)
    p = {"sa": 0.03, "sb": 0.02, "sc": 0.04}
    inits = [_init(k, v, "float32") for k, v in p.items()] + \
        [_init("za", 3, "int8"), _init("zb", -5, "int8"), _init("zc", 1, "int8"),
         _init("w", rng.integers(-127, 128, (8, 8)), "int8")]
    f = helper.make_node
    nodes = [f("QLinearMatMul", ["a", "sa", "za", "w", "sb", "zb", "sc", "zc"], ["mm"]),
             f("QLinearAdd", ["mm", "sc", "zc", "b", "sb", "zb", "sa", "za"], ["add"],
               domain="com.microsoft"),
             f("QLinearMul", ["add", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["mul"],
               domain="com.microsoft"),
             f("QLinearSigmoid", ["mul", "sc", "zc", "sa", "za"], ["sig"],
               domain="com.microsoft"),
             f("QLinearConcat", ["sb", "zb", "sig", "sa", "za", "mul", "sc", "zc"], ["cat"],
               axis=1, domain="com.microsoft"),
             f("Reshape", ["cat", "shape"], ["img"]),
             f("QLinearGlobalAveragePool", ["img", "sb", "zb", "sa", "za"], ["gap"],
               domain="com.microsoft")]
    inits.append(_init("shape", [2, 4, 2, 2], "int64"))
    i8 = TensorProto.INT8
    model = _model(nodes, [helper.make_tensor_value_info("a", i8, (2, 8)),
                           helper.make_tensor_value_info("b", i8, (2, 8))],
                   [helper.make_tensor_value_info(n, i8, None)
                    for n in ("mm", "add", "mul", "sig", "cat", "gap")], inits, ms=True)
    feed = {k: rng.integers(-128, 128, (2, 8)).astype("int8") for k in ("a", "b")}
    _exact(model, feed, target)


def test_qdq_without_zero_points_and_per_tensor(target):
    """QuantizeLinear / DequantizeLinear without zero points (uint8, 0) and per-tensor int8
    weights around a MatMul: the integer rewrite's int8 output within 1 of ONNX Runtime's."""
    rng = np.random.default_rng(2)
    f = helper.make_node
    inits = [_init("s", 0.05, "float32"), _init("w", rng.integers(-127, 128, (16, 8)), "int8"),
             _init("sw", 0.01, "float32"), _init("sy", 0.2, "float32")]
    nodes = [f("QuantizeLinear", ["x", "s"], ["xq"]), f("DequantizeLinear", ["xq", "s"], ["xd"]),
             f("DequantizeLinear", ["w", "sw"], ["wd"]), f("MatMul", ["xd", "wd"], ["y"]),
             f("QuantizeLinear", ["y", "sy"], ["yq"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, 16))],
                   [helper.make_tensor_value_info("yq", TensorProto.UINT8, None)], inits)
    feed = {"x": np.abs(rng.standard_normal((4, 16))).astype("float32") * 3}
    mod, params = from_onnx(model)
    (got,) = compile_model(mod, params, target).run(feed)
    (want,) = reference(model, feed)
    assert got.dtype == want.dtype == np.uint8
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert (got == want).mean() >= 0.95


# ---- bad parameters ---------------------------------------------------------------------------
def _dq_model(scale, zp, zp_dtype, x_shape=(2, 3), axis=1, x_type=TensorProto.INT8):
    inits = [_init("s", scale, "float32"), _init("z", zp, zp_dtype)]
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq_bad",
                            axis=axis)
    return _model([node], [helper.make_tensor_value_info("x", x_type, x_shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


def test_scale_of_zero_is_an_error():
    with pytest.raises(ModelError, match=r"dq_bad.*scale must be positive.*got 0"):
        from_onnx(_dq_model(0.0, 0, "int8"))


def test_zero_point_outside_its_type_is_an_error():
    node = helper.make_node("QLinearConv", ["x", "s", "z", "w", "s", "zw", "s", "z"], ["y"],
                            name="conv_bad")
    inits = [_init("s", 0.1, "float32"), _init("z", 0, "uint8"),
             _init("w", np.ones((1, 1, 1, 1)), "int8"), _init("zw", 300, "int32")]
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 1, 2, 2))],
                   [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    with pytest.raises(ModelError, match=r"conv_bad.*zero point 300 is outside the range of "
                                         r"int8"):
        from_onnx(model)


def test_per_channel_length_mismatch_is_an_error():
    with pytest.raises(ModelError, match=r"dq_bad.*4 per-channel scales.*3 channels"):
        from_onnx(_dq_model([0.1] * 4, [0] * 4, "int8"))
    with pytest.raises(ModelError, match=r"dq_bad.*scale has 3 values but its zero point "
                                         r"has 2"):
        from_onnx(_dq_model([0.1] * 3, [0] * 2, "int8"))
