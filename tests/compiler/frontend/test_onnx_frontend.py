"""compiler.frontend.from_onnx: the module it makes (inputs then weights, num_input, params by
ONNX name), symbolic dims, folding of shape subgraphs, the errors of bad input, and the
attribute variants of each operator (old-opset attribute forms, auto_pad, 1-D windows, ...)
checked against onnxruntime with the graph-level reference interpreter (rtol 1e-5, atol 1e-6
unless stated)."""
import math

import numpy as np
import pytest
from kiln_onnx_backend import lower_model
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import check, interpret, node_model, rand

from compiler.frontend import ModelError, UnsupportedOpError, from_onnx
from compiler.frontend.onnx import required_constants
from compiler.frontend.testing import onnx_models
from compiler.ir.errors import CompilerError, IRError
from compiler.relax import expr as X
from compiler.relax.backend.graph.codegen import codegen


def _ops(mod):
    return [b.value.op.name for blk in mod["main"].body.blocks for b in blk.bindings
            if isinstance(b.value, X.Call)]


# ---- the module -----------------------------------------------------------------------------
def test_params_are_weights_after_the_inputs():
    m = onnx_models.lenet()
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    assert names[0] == "x" and main.attrs["num_input"] == 1
    weights = [t.name for t in m.model.graph.initializer]
    assert names[1:] == weights and list(params) == weights
    for t in m.model.graph.initializer:
        np.testing.assert_array_equal(params[t.name], numpy_helper.to_array(t))
    assert tuple(main.params[0].struct_info.shape) == (2, 1, 16, 16)


def test_integer_initializers_and_shape_subgraphs_fold():
    m = onnx_models.transformer_block()
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    assert "heads_shape" not in params and "i0" not in params
    ops = _ops(mod)
    assert "relax.shape_of" not in ops and "relax.take" not in ops and "relax.concat" not in ops
    feed = m.inputs(seed=3)
    check(m.model, feed, rtol=1e-4, atol=1e-5, shape=m.input_shapes)


def test_symbolic_dims_from_dim_param_and_from_shape():
    m = onnx_models.mlp()
    mod, _ = from_onnx(m.model)
    (n, f) = mod["main"].params[0].struct_info.shape
    assert f == 32 and n.name == "N"
    out = mod["main"].ret_struct_info.shape
    assert out[0] is n and out[1] == 10
    mod, _ = from_onnx(m.model, shape={"x": ("batch", 32)})
    assert mod["main"].params[0].struct_info.shape[0].name == "batch"
    feed = m.inputs(seed=1)
    check(m.model, feed, atol=1e-6, shape={"x": ("batch", 32)})


def test_graph_executor_build_names_the_symbolic_inputs():
    m = onnx_models.mlp()
    mod, params = from_onnx(m.model)
    with pytest.raises(IRError, match=r"'x' has shape \(N, 32\).*shape=\{'x': \(1, 32\)\}"):
        lower_model(mod, params)
    with pytest.raises(IRError, match=r"from_onnx\(model, shape="):
        codegen(mod["main"])


def test_dtype_for_untyped_inputs_and_opset_override():
    x = rand(2, 3)
    model = node_model("Relu", {"x": x})
    model.graph.input[0].type.tensor_type.elem_type = 0
    mod, _ = from_onnx(model, dtype={"x": "float64"})
    assert mod["main"].params[0].struct_info.dtype == "float64"
    sm = node_model("Softmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=11)
    a = interpret(sm, {"x": rand(2, 3, 4)})[0]
    b = interpret(sm, {"x": rand(2, 3, 4)}, opset=13)[0]
    assert not np.allclose(a, b)


# ---- errors ---------------------------------------------------------------------------------
def _two_unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("Foo", ["a"], ["b"], name="foo1"),
             helper.make_node("Hardmax", ["b"], ["c"], name="hm"),
             helper.make_node("Foo", ["c"], ["y"], name="foo2")]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 13)])


def test_unsupported_ops_are_all_listed_with_their_nodes():
    with pytest.raises(UnsupportedOpError) as e:
        from_onnx(_two_unsupported())
    msg = str(e.value)
    lines = msg.splitlines()
    assert lines[0] == "the model uses 2 operators the ONNX frontend cannot handle (3 nodes):"
    assert lines[1].startswith("on the run-time path")
    assert lines[2] == "  Foo      2 nodes: 'foo1', 'foo2'"
    assert lines[3] == "  Hardmax  1 node: 'hm'"
    assert lines[4].startswith("what to do: ")
    assert "Relu" not in msg and len(lines) == 5


@pytest.mark.parametrize("data", [b"", b"\x08\x07garbage\xff\xff\xff", b"not a model at all"])
def test_corrupt_bytes(data):
    with pytest.raises(ModelError, match="not a readable ONNX model|no graph"):
        from_onnx(data)


def test_truncated_file(tmp_path):
    blob = onnx_models.mlp().model.SerializeToString()
    for cut in (len(blob) // 3, len(blob) - 7):
        path = tmp_path / f"cut{cut}.onnx"
        path.write_bytes(blob[:cut])
        with pytest.raises(ModelError):
            from_onnx(str(path))
    with pytest.raises(ModelError, match="cannot read"):
        from_onnx(str(tmp_path / "missing.onnx"))
    whole = tmp_path / "whole.onnx"
    whole.write_bytes(blob)
    mod, params = from_onnx(whole, shape={"x": (1, 32)})
    assert len(params) == 4


def test_missing_shape_and_bad_shape_argument():
    model = node_model("Relu", {"x": rand(2, 3)})
    model.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(ModelError, match=r"'x' has no shape.*shape=\{'x'"):
        from_onnx(model)
    assert from_onnx(model, shape={"x": (4, 5)})[0]["main"].params[0].struct_info.shape == (4, 5)
    with pytest.raises(ModelError, match="not inputs of the model"):
        from_onnx(model, shape={"y": (4, 5)})
    with pytest.raises(ModelError, match="non-negative int or a name"):
        from_onnx(model, shape={"x": (-4, 5)})


def test_dynamic_value_where_a_constant_is_needed():
    model = node_model("Reshape", {"x": rand(2, 6), "s": np.array([3, 4], "int64")})
    with pytest.raises(ModelError, match=r"Reshape node 'n0'.*'s'.*initializer"):
        from_onnx(model)
    assert required_constants(model) == ["s"]


def test_shape_of_symbolic_dims_says_how_to_bind():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="sh"),
             helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    # a shape of symbolic dims is a shape: the Reshape takes them
    assert from_onnx(model)[0]["main"].ret_struct_info.shape[1] == 4
    assert from_onnx(model, shape={"x": (2, 4)})[0]["main"].ret_struct_info.shape == (2, 4)
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="sh"),
             helper.make_node("Cast", ["s"], ["y"], name="ca", to=TensorProto.FLOAT)]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(UnsupportedOpError, match=r"Cast node 'ca'.*\(n, 4\).*"
                                                 r"shape=\{'x': \(1, 4\)\}"):
        from_onnx(model)


def test_old_opset_and_unsupported_variant():
    with pytest.raises(UnsupportedOpError, match="opset 1,.*Reshape changed"):
        from_onnx(node_model("Reshape", {"x": rand(2)}, {"shape": [2, 1]}, opset=1))
    check(node_model("Relu", {"x": rand(2)}, opset=6), {"x": rand(2)})
    with pytest.raises(UnsupportedOpError, match="Conv node 'n0': a 4-D spatial input"):
        from_onnx(node_model("Conv", {"x": rand(1, 1, 3, 3, 3, 3), "w": rand(1, 1, 1, 1, 1, 1)}))
    with pytest.raises(UnsupportedOpError, match="Indices output"):
        from_onnx(node_model("MaxPool", {"x": rand(1, 1, 4, 4)}, {"kernel_shape": [2, 2]},
                             n_out=2))
    assert issubclass(ModelError, CompilerError) and issubclass(UnsupportedOpError,
                                                                 CompilerError)


# ---- attribute variants against onnxruntime --------------------------------------------------
X4 = rand(1, 2, 7, 6)


@pytest.mark.parametrize("attrs", [
    {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 1]},
    {"auto_pad": "VALID", "dilations": [2, 1]},
    {"pads": [0, 1, 2, 1], "group": 2},
], ids=["same_lower", "same_upper", "valid_dilated", "asym_pads_groups"])
def test_conv_padding_variants(attrs):
    group = attrs.get("group", 1)
    check(node_model("Conv", {"x": X4, "w": rand(4, 2 // group, 3, 3, seed=1),
                              "b": rand(4, seed=2)}, attrs, weights="wb"), {"x": X4}, atol=1e-5)


def test_conv1d_and_convtranspose_output_shape():
    x = rand(1, 2, 9)
    check(node_model("Conv", {"x": x, "w": rand(3, 2, 3, seed=1)},
                     {"strides": [2], "pads": [1, 0]}, weights="w"), {"x": x}, atol=1e-5)
    check(node_model("ConvTranspose", {"x": x, "w": rand(2, 3, 3, seed=1)},
                     {"strides": [2], "output_shape": [20]}, weights="w"), {"x": x}, atol=1e-5)


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("MaxPool", {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    ("AveragePool", {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 2],
                     "ceil_mode": 1}),
], ids=["max_ceil", "max_same", "avg_include_pad", "avg_ceil_exclude_pad"])
def test_pool_variants(op, attrs):
    check(node_model(op, {"x": X4}, attrs, opset=11), {"x": X4})


def test_pool1d_and_global_pools_of_any_rank():
    x = rand(2, 3, 10)
    check(node_model("MaxPool", {"x": x}, {"kernel_shape": [3], "strides": [2]}), {"x": x})
    check(node_model("GlobalAveragePool", {"x": x}), {"x": x})
    check(node_model("GlobalMaxPool", {"x": X4}), {"x": X4})


@pytest.mark.parametrize("attrs", [{"alpha": 0.5, "beta": 2.0, "transA": 1},
                                   {"transB": 1, "beta": 0.0}, {"alpha": 2.0}])
def test_gemm_variants(attrs):
    a = rand(3, 4) if attrs.get("transA") else rand(4, 3)
    b = rand(5, 3, seed=1) if attrs.get("transB") else rand(3, 5, seed=1)
    check(node_model("Gemm", {"a": a, "b": b, "c": rand(5, seed=2)}, attrs, weights="bc"), {"a": a})


def test_matmul_vectors():
    for sa, sb in (((3,), (3, 4)), ((2, 3, 4), (4,)), ((4,), (4,))):
        a, b = rand(*sa), rand(*sb, seed=1)
        check(node_model("MatMul", {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("opset,axis", [(11, 1), (11, 0), (11, -1), (13, 1)])
def test_softmax_axis_semantics(opset, axis):
    x = rand(2, 3, 4)
    for op in ("Softmax", "LogSoftmax"):
        check(node_model(op, {"x": x}, {"axis": axis}, opset=opset), {"x": x})


def test_old_attribute_forms():
    x = rand(2, 1, 3, 1)
    check(node_model("Squeeze", {"x": x}, {"axes": [1, -1]}, opset=11), {"x": x})
    check(node_model("Unsqueeze", {"x": rand(2, 3)}, {"axes": [0, 3]}, opset=11),
          {"x": rand(2, 3)})
    check(node_model("Clip", {"x": X4}, {"min": -0.5, "max": 0.5}, opset=7), {"x": X4})
    check(node_model("Split", {"x": rand(6, 2)}, {"split": [2, 4]}, opset=11, n_out=2),
          {"x": rand(6, 2)})
    check(node_model("Slice", {"x": X4}, {"starts": [1, -4], "ends": [100, -1],
                                         "axes": [2, 3]}, opset=9), {"x": X4})
    check(node_model("Pad", {"x": X4}, {"pads": [0, 0, 1, 2, 0, 0, 2, 0], "value": 1.5},
                     opset=10), {"x": X4})
    check(node_model("ReduceMean", {"x": X4}, {"axes": [1, 3], "keepdims": 0}, opset=13),
          {"x": X4})
    check(node_model("Upsample", {"x": X4}, {"scales": [1.0, 1.0, 2.0, 3.0]}, opset=7),
          {"x": X4})
    check(node_model("Dropout", {"x": X4}, {"ratio": 0.3}, opset=7), {"x": X4})


def test_input_forms_given_as_initializers():
    inits = {"axes": np.array([1, 3], "int64"), "lo": np.array(-0.2, "float32"),
             "hi": np.array(0.7, "float32")}
    check(node_model("ReduceMax", {"x": X4, "axes": inits["axes"]}, {"keepdims": 1},
                     opset=18, initializers={"axes": inits["axes"]}), {"x": X4})
    check(node_model("Clip", {"x": X4, "lo": inits["lo"], "hi": inits["hi"]}, opset=13,
                     initializers=inits), {"x": X4})
    check(node_model("Clip", {"x": X4, "": None, "hi": inits["hi"]}, opset=13,
                     initializers={"hi": inits["hi"]}), {"x": X4})
    pads = np.array([0, 0, 1, -1, 0, 0, -2, 2], "int64")
    check(node_model("Pad", {"x": X4, "pads": pads}, {"mode": "constant"}, opset=13,
                     initializers={"pads": pads}), {"x": X4})
    scales = np.array([1.0, 1.0, 2.0, 2.0], "float32")
    for mode, coord in (("nearest", "asymmetric"), ("linear", "align_corners"),
                        ("linear", "half_pixel")):
        check(node_model("Resize", {"x": X4, "": None, "scales": scales},
                         {"mode": mode, "coordinate_transformation_mode": coord}, opset=13,
                         initializers={"scales": scales}), {"x": X4}, atol=1e-5)


def test_decomposed_activations_and_norms():
    x = rand(2, 3, 4, 5)
    check(node_model("HardSigmoid", {"x": x}, {"alpha": 0.3, "beta": 0.4}), {"x": x})
    check(node_model("HardSwish", {"x": x}, opset=14), {"x": x})
    check(node_model("PRelu", {"x": x, "s": rand(3, 1, 1, seed=1)}, opset=16, weights="s"),
          {"x": x})
    check(node_model("Gelu", {"x": x}, {"approximate": "tanh"}, opset=20), {"x": x})
    check(node_model("InstanceNormalization", {"x": x, "s": rand(3, seed=1),
                                               "b": rand(3, seed=2)}, weights="sb"), {"x": x},
          atol=1e-5)
    check(node_model("LayerNormalization", {"x": x, "s": rand(4, 5, seed=1)}, {"axis": 2},
                     opset=17, weights="s"), {"x": x}, atol=1e-5)
    check(node_model("Mean", {"a": x, "b": rand(4, 5, seed=1), "c": rand(5, seed=2)}),
          {"a": x, "b": rand(4, 5, seed=1), "c": rand(5, seed=2)})
    check(node_model("LRN", {"x": x}, {"size": 3, "alpha": 0.01}), {"x": x}, atol=1e-5)


def test_gather_negative_indices_and_argmax_last_index():
    x = rand(4, 5)
    idx = np.array([[-1, 0], [2, -4]], "int64")
    check(node_model("Gather", {"x": x, "i": idx}, {"axis": 1}), {"x": x, "i": idx})
    check(node_model("Gather", {"x": x, "i": idx}, {"axis": 0}, initializers={"i": idx}),
          {"x": x})
    t = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], "float32")
    check(node_model("ArgMax", {"x": t}, {"axis": 1, "select_last_index": 1}, opset=12),
          {"x": t})


def test_constant_folding_of_constant_nodes():
    c = helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0])
    s = helper.make_node("ConstantOfShape", ["shape"], ["z"],
                         value=numpy_helper.from_array(np.array([0.5], "float32")))
    a = helper.make_node("Add", ["c", "z"], ["cz"])
    y = helper.make_node("Mul", ["x", "cz"], ["y"])
    graph = helper.make_graph(
        [c, s, a, y], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([2, 3], "int64"), "shape")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    mod, params = from_onnx(model)
    assert _ops(mod) == ["relax.multiply"] and params == {}
    x = rand(2, 3)
    np.testing.assert_allclose(interpret(model, {"x": x})[0], x * np.array([1.5, 2.5, 3.5]),
                               rtol=1e-6)
    assert math.isclose(interpret(model, {"x": np.ones((2, 3), "float32")})[0][1, 2], 3.5)
