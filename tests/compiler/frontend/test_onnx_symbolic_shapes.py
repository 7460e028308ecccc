"""Models with a symbolic axis whose shape subgraphs (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape / Expand / ConstantOfShape) fold into symbolic dims: they build for the Relax VM with
the axis left symbolic and run at several lengths, matching onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import microruntime
from compiler import relax
from compiler.frontend import from_onnx
from compiler.frontend.errors import UnsupportedOpError
from microruntime.relax_vm import VirtualMachine

ort = pytest.importorskip("onnxruntime")

RTOL, ATOL = 1e-3, 1e-4
HEADS, HEAD_DIM = 2, 4
HIDDEN = HEADS * HEAD_DIM


def _c(name, values):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.asarray(values, dtype=np.int64), name))


def _attention_model():
    """x (1, seq, 8) -> self-attention with two heads: the head split and merge reshape to
    shapes built from Shape(x), the scores are Softmax(q k^T / 2)."""
    rng = np.random.default_rng(0)
    w = {n: numpy_helper.from_array(rng.standard_normal((HIDDEN, HIDDEN)).astype("float32"), n)
         for n in ("wq", "wk", "wv")}
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _c("i0", 0), _c("i1", 1), _c("ax0", [0]),
        _c("heads", [HEADS]), _c("hdim", [HEAD_DIM]), _c("minus1", [-1]),
        helper.make_node("Gather", ["shape", "i0"], ["batch"], axis=0),
        helper.make_node("Gather", ["shape", "i1"], ["seq"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "ax0"], ["batch1"]),
        helper.make_node("Unsqueeze", ["seq", "ax0"], ["seq1"]),
        helper.make_node("Concat", ["batch1", "seq1", "heads", "hdim"], ["split_shape"], axis=0),
        helper.make_node("Concat", ["batch1", "seq1", "minus1"], ["merge_shape"], axis=0),
    ]
    for n in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["x", "w" + n], [n + "_flat"]),
                  helper.make_node("Reshape", [n + "_flat", "split_shape"], [n + "_split"]),
                  helper.make_node("Transpose", [n + "_split"], [n + "_heads"],
                                   perm=[0, 2, 1, 3] if n != "k" else [0, 2, 3, 1])]
    nodes += [
        helper.make_node("MatMul", ["q_heads", "k_heads"], ["scores"]),
        helper.make_node("Constant", [], ["scale"], value=numpy_helper.from_array(
            np.asarray(0.5, dtype=np.float32), "scale")),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v_heads"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", HIDDEN])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "attention", [x], [y], initializer=list(w.values()))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def test_attention_with_symbolic_seq_runs_at_two_lengths():
    model = _attention_model()
    mod, params = from_onnx(model)
    sinfo = mod["main"].ret_struct_info
    assert sinfo.shape[0] == 1 and sinfo.shape[2] == HIDDEN
    assert not isinstance(sinfo.shape[1], int)     # the output keeps the symbolic seq
    vm = VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())
    rng = np.random.default_rng(1)
    for seq in (3, 11):
        x = rng.standard_normal((1, seq, HIDDEN)).astype("float32")
        got = vm["main"](x).numpy()
        np.testing.assert_allclose(got, _ort(model, {"x": x}), rtol=RTOL, atol=ATOL)


def test_expand_and_constant_of_shape_take_symbolic_dims():
    """ConstantOfShape(Shape(x)) and Expand(c, Shape(x)) are filled at run time."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(
            np.ones(1, dtype=np.float32), "one")),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
            np.asarray([2.0], dtype=np.float32), "c")),
        helper.make_node("Expand", ["c", "s"], ["twos"]),
        helper.make_node("Add", ["x", "ones"], ["a"]),
        helper.make_node("Mul", ["a", "twos"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    mod, params = from_onnx(model)
    vm = VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())
    for n in (2, 5):
        x = np.arange(n * 3, dtype="float32").reshape(n, 3)
        got = vm["main"](x).numpy()
        np.testing.assert_allclose(got, _ort(model, {"x": x}), rtol=RTOL, atol=ATOL)


def test_symbolic_dims_used_as_a_tensor_are_refused_clearly():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Cast", ["s"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x", "f"], ["y"], name="add")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOpError, match=r"Cast node .*symbolic shape \(n\).*"
                                                 r"shape=\{'x': \(1,\)\}"):
        from_onnx(model)
