"""3-D convolutions and pools (and the 1-D ones) from ONNX, against onnxruntime: each model is
imported and run by the graph-level reference interpreter, and compiled to kernels (llvm) and
run: Conv with groups, strides, pads, auto_pad, dilations and a bias; MaxPool / AveragePool
(pads, ceil_mode, dilations, count_include_pad); GlobalAveragePool / GlobalMaxPool; and a small
3-D network with BatchNormalization, whose batch norm is folded into the convolution."""
import numpy as np
import onnx
import pytest
from kiln_onnx_backend import compile_model
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import check, node_model, ort_run, rand

from compiler.frontend import UnsupportedOpError, from_onnx


def _compiled(model, feed):
    mod, params = from_onnx(model)
    return compile_model(mod, params).run(feed)


def _both(model, feed, rtol=1e-4, atol=1e-5):
    """Interpreted and compiled, both against onnxruntime."""
    check(model, feed, rtol=rtol, atol=atol)
    want = ort_run(model, feed)
    got = _compiled(model, feed)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


CONV3D_CASES = {
    "plain": ((1, 3, 5, 8, 8), (4, 3, 3, 3, 3), {}),
    "pads-strides": ((1, 2, 6, 9, 11), (5, 2, 3, 5, 3),
                     dict(pads=[1, 2, 0, 0, 1, 2], strides=[1, 2, 3])),
    "dilations": ((2, 2, 7, 8, 9), (3, 2, 2, 3, 2), dict(dilations=[2, 2, 3], pads=[1] * 6)),
    "groups": ((1, 6, 4, 6, 6), (9, 2, 3, 3, 3), dict(group=3, pads=[1] * 6)),
    "depthwise": ((1, 4, 4, 6, 6), (4, 1, 3, 3, 3), dict(group=4, strides=[2, 2, 2])),
    "same-upper": ((1, 2, 5, 7, 6), (3, 2, 3, 3, 2),
                   dict(auto_pad="SAME_UPPER", strides=[2, 2, 1])),
    "stem": ((1, 3, 4, 16, 16), (8, 3, 3, 7, 7), dict(pads=[1, 3, 3, 1, 3, 3],
                                                     strides=[1, 2, 2])),
}


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", list(CONV3D_CASES))
def test_conv3d(case, bias):
    xs, ws, attrs = CONV3D_CASES[case]
    inputs = {"x": rand(*xs), "w": rand(*ws, seed=1)}
    if bias:
        inputs["b"] = rand(ws[0], seed=2)
    model = node_model("Conv", inputs, attrs, weights=[k for k in inputs if k != "x"])
    _both(model, {"x": inputs["x"]})


POOL3D_CASES = {
    "max": ("MaxPool", dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2])),
    "max-pads-ceil": ("MaxPool", dict(kernel_shape=[3, 3, 3], strides=[1, 2, 2],
                                      pads=[1, 1, 1, 1, 1, 1], ceil_mode=1)),
    "max-dilations": ("MaxPool", dict(kernel_shape=[2, 2, 2], dilations=[2, 1, 2])),
    "avg": ("AveragePool", dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2],
                                pads=[1, 0, 1, 1, 1, 0])),
    "avg-include-pad": ("AveragePool", dict(kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                                            pads=[1, 1, 1, 1, 0, 1], count_include_pad=1)),
    "avg-ceil-dilations": ("AveragePool", dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2],
                                               dilations=[2, 1, 2], ceil_mode=1)),
    "avg-same-lower": ("AveragePool", dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2],
                                           auto_pad="SAME_LOWER")),
}


@pytest.mark.parametrize("case", list(POOL3D_CASES))
def test_pool3d(case):
    op, attrs = POOL3D_CASES[case]
    x = rand(1, 3, 6, 7, 8)
    _both(node_model(op, {"x": x}, attrs, opset=19), {"x": x})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool3d(op):
    x = rand(2, 3, 4, 5, 6)
    _both(node_model(op, {"x": x}), {"x": x})


ONE_D_CASES = {
    "conv": ("Conv", dict(pads=[1, 2], strides=[2], dilations=[2]), True),
    "conv-groups": ("Conv", dict(group=2, pads=[1, 1]), True),
    "maxpool": ("MaxPool", dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1),
                False),
    "avgpool": ("AveragePool", dict(kernel_shape=[3], strides=[2], pads=[1, 0],
                                    count_include_pad=1), False),
}


@pytest.mark.parametrize("case", list(ONE_D_CASES))
def test_one_d(case):
    op, attrs, weighted = ONE_D_CASES[case]
    inputs = {"x": rand(2, 4, 11)}
    if weighted:
        inputs["w"] = rand(6, 4 // attrs.get("group", 1), 3, seed=1)
        inputs["b"] = rand(6, seed=2)
    model = node_model(op, inputs, attrs, opset=19, weights=[k for k in inputs if k != "x"])
    _both(model, {"x": inputs["x"]})


def test_four_d_spatial_input_is_refused_clearly():
    inputs = {"x": rand(1, 1, 3, 3, 3, 3), "w": rand(1, 1, 2, 2, 2, 2, seed=1)}
    model = node_model("Conv", inputs, weights=["w"])
    with pytest.raises(UnsupportedOpError, match=r"a 4-D spatial input \(1-D, 2-D and 3-D are\)"):
        from_onnx(model)


def _small_3d_net():
    """conv3d + BatchNormalization + relu, max pool, a residual conv3d block, global average
    pool, a linear layer: the shape of a video ResNet, in small."""
    rng = np.random.default_rng(3)

    def arr(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype("float32")

    def bn(name, c):
        return [numpy_helper.from_array(v, f"{name}_{k}") for k, v in (
            ("g", 1 + arr(c)), ("b", arr(c)), ("m", arr(c)),
            ("v", (0.5 + rng.random(c)).astype("float32")))]

    inits = [numpy_helper.from_array(arr(8, 3, 3, 5, 5), "w1")] + bn("bn1", 8) + \
        [numpy_helper.from_array(arr(8, 8, 3, 3, 3), "w2")] + bn("bn2", 8) + \
        [numpy_helper.from_array(arr(5, 8), "fc_w"), numpy_helper.from_array(arr(5), "fc_b"),
         numpy_helper.from_array(np.array([1, 8], "int64"), "flat")]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 2, 2, 1, 2, 2],
                         strides=[1, 2, 2]),
        helper.make_node("BatchNormalization", ["c1"] + [f"bn1_{k}" for k in "gbmv"], ["n1"],
                         epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[1, 3, 3], strides=[1, 2, 2],
                         pads=[0, 1, 1, 0, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1] * 6),
        helper.make_node("BatchNormalization", ["c2"] + [f"bn2_{k}" for k in "gbmv"], ["n2"]),
        helper.make_node("Add", ["n2", "p1"], ["s2"]),
        helper.make_node("Relu", ["s2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Reshape", ["g", "flat"], ["f"]),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "video", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3, 4, 16, 16))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 5))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def test_small_3d_network_with_batch_norm():
    model = _small_3d_net()
    x = rand(1, 3, 4, 16, 16)
    _both(model, {"x": x})


def test_batch_norm_folds_into_conv3d():
    from compiler.relax.transform import bind_params, fold_batch_norm

    mod, params = from_onnx(_small_3d_net())
    mod = fold_batch_norm(bind_params(mod, params))
    ops = []
    for block in mod["main"].body.blocks:
        for b in block.bindings:
            ops.append(getattr(getattr(b.value, "op", None), "name", None))
    assert "relax.nn.batch_norm" not in ops
    assert ops.count("relax.nn.conv3d") == 2
    # the scales went into the weights: what is left of each batch norm is a shift (add)
    assert "relax.multiply" not in ops


def test_conv3d_and_pool3d_on_opencl():
    """GPU targets schedule conv3d (two-level sums included) and the 3-D pools too."""
    import microruntime as mr
    from compiler import relay
    from microruntime import graph_executor

    if not mr.opencl().exist:
        pytest.skip("no OpenCL device (apt-get install pocl-opencl-icd)")
    cases = [("Conv", {"x": rand(1, 16, 3, 6, 6), "w": rand(4, 16, 3, 3, 3, seed=1)},
              dict(pads=[1] * 6)),
             ("AveragePool", {"x": rand(1, 2, 4, 6, 6)}, dict(kernel_shape=[2, 2, 2]))]
    for op, inputs, attrs in cases:
        model = node_model(op, inputs, attrs, weights=[k for k in inputs if k != "x"])
        mod, params = from_onnx(model)
        lib = relay.build(mod, target="opencl", params=params)
        g = graph_executor.GraphModule(lib["default"](mr.opencl()))
        g.set_input("x", inputs["x"])
        g.run()
        np.testing.assert_allclose(g.get_output(0).numpy(), ort_run(model, {"x": inputs["x"]})[0],
                                   rtol=1e-4, atol=1e-4)
