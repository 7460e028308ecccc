"""A weight a model reads twice is stored once in the params: a token embedding table read by
a Gather and, transposed, by the output MatMul (GPT-2's tied weights), and initializers of
equal contents."""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import microruntime as mr
from compiler import relay
from compiler.frontend import from_onnx
from microruntime import graph_executor

V, C, T = 50, 16, 5


def _model(nodes, inputs, inits):
    g = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info("y")],
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def _check(model, feed):
    mod, params = from_onnx(model)
    lib = relay.build(mod, target="llvm", params=params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    gm.run(**feed)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feed)[0]
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-5)
    return lib.get_params()


def test_embedding_and_transposed_output_layer_share_one_copy():
    w = np.random.default_rng(0).standard_normal((V, C)).astype("float32")
    nodes = [helper.make_node("Gather", ["W", "ids"], ["h"], axis=0),
             helper.make_node("Transpose", ["W"], ["WT"], perm=[1, 0]),
             helper.make_node("MatMul", ["h", "WT"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, T])],
                   {"W": w})
    params = _check(model, {"ids": np.array([[1, 4, -1, 49, 0]], "int64")})
    assert [p.shape for p in params.values()] == [(V, C)]
    assert np.array_equal(next(iter(params.values())).numpy(), w)


def test_equal_initializers_are_stored_once():
    w = np.random.default_rng(1).standard_normal((C, C)).astype("float32")
    nodes = [helper.make_node("MatMul", ["x", "A"], ["h"]),
             helper.make_node("MatMul", ["h", "B"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, C])],
                   {"A": w, "B": w.copy()})
    params = _check(model, {"x": np.random.default_rng(2).standard_normal((T, C))
                            .astype("float32")})
    assert len(params) == 1
