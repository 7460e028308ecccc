"""ONNX models with dims known only at run time, and with If, built once for the Relax VM and
run at several sizes (and down both branches), matching onnxruntime (rtol = atol = 1e-4):

- a CNN (Conv, Relu, MaxPool, depthwise Conv, GlobalAveragePool, Flatten, Gemm) with a
  symbolic batch run at 1, 3 and 8; one with symbolic batch, height and width;
- self-attention (one and two heads) on [1, S, 16] with the head split and merge reshaping to
  shapes computed by Shape / Gather / Concat, run at S = 1, 5, 17; one with a symbolic batch
  too, a causal mask and positions from Range(0, S), and the last token taken by Slice;
- If on a condition computed at run time (branches reading outer values, two outputs,
  branches of different shapes); If on a constant condition folded, so the graph executor runs
  it too; a run-time If refused by the graph executor;
- Loop with a run-time trip count and a condition computed by the body (reading an outer
  value and a weight), and one whose loop-carried value grows; scan outputs refused.
"""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import microruntime
from compiler import relax, relay
from compiler.frontend import from_onnx
from compiler.frontend.errors import UnsupportedOpError
from compiler.frontend.testing.dynamic_models import HIDDEN, runtime_if
from compiler.frontend.testing.dynamic_models import attention as _attention
from compiler.frontend.testing.dynamic_models import branch as _branch
from compiler.frontend.testing.dynamic_models import cnn as _cnn
from compiler.frontend.testing.dynamic_models import const as _const
from compiler.frontend.testing.dynamic_models import if_model as _if_model
from compiler.frontend.testing.dynamic_models import model as _model
from compiler.frontend.testing.dynamic_models import out as _out
from compiler.frontend.testing.dynamic_models import sum_positive as _sum_positive
from compiler.frontend.testing.dynamic_models import weight as _weight
from compiler.ir.errors import CompilerError
from compiler.relax.functor import ExprVisitor
from microruntime.relax_vm import VirtualMachine

ort = pytest.importorskip("onnxruntime")

RTOL = ATOL = 1e-4


def _vm(model):
    mod, params = from_onnx(model)
    return mod, VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())


def _check(vm, model, x):
    """Runs the VM and onnxruntime on x; the largest absolute difference."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})
    got = vm["main"](x)
    got = [got] if len(want) == 1 else list(got)
    worst = 0.0
    for g, w in zip(got, want):
        g = g.numpy()
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
        worst = max(worst, float(np.abs(g - w).max()))
    return worst


# ---- a CNN ---------------------------------------------------------------------------------
def test_cnn_with_symbolic_batch():
    model = _cnn(["N", 3, 12, 12])
    mod, vm = _vm(model)
    assert not isinstance(mod["main"].ret_struct_info.shape[0], int)
    rng = np.random.default_rng(1)
    for n in (1, 3, 8):
        _check(vm, model, rng.standard_normal((n, 3, 12, 12)).astype("float32"))


def test_cnn_with_symbolic_batch_and_plane():
    """conv -> relu -> depthwise conv (both keep H x W) -> global avg pool -> gemm, and a
    ceil-mode max pool of the same features as a second output (for an odd H or W its last
    window would start in the padding, so it is dropped)."""
    rng = np.random.default_rng(2)
    inits = [_weight(rng, "w1", (6, 3, 3, 3)), _weight(rng, "w2", (6, 1, 3, 3)),
             _weight(rng, "b2", (6,)), _weight(rng, "wf", (6, 4))]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=6),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("MatMul", ["f", "wf"], ["y"]),
        helper.make_node("MaxPool", ["c2"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                         pads=[1, 1, 1, 1], ceil_mode=1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    model = _model(nodes, [x], [_out("y"), _out("p")], inits)
    _, vm = _vm(model)
    for shape in ((1, 3, 8, 8), (3, 3, 5, 9), (2, 3, 12, 7)):
        _check(vm, model, rng.standard_normal(shape).astype("float32"))


def test_pools_of_a_symbolic_plane_added():
    """MaxPool(x) + AveragePool(x) with N, H, W symbolic: the add is fused into the max pool's
    kernel, which compares the computed dims (H // 2) of both operands."""
    nodes = [helper.make_node("MaxPool", ["x"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["x"], ["b"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "H", "W"])
    model = _model(nodes, [x], [_out("y")])
    _, vm = _vm(model)
    rng = np.random.default_rng(9)
    for shape in ((1, 2, 4, 6), (3, 2, 7, 10)):
        _check(vm, model, rng.standard_normal(shape).astype("float32"))


def test_cnn_with_symbolic_plane_after_pooling():
    model = _cnn(["N", 3, "H", "W"])
    _, vm = _vm(model)
    rng = np.random.default_rng(3)
    for shape in ((1, 3, 10, 10), (2, 3, 13, 8)):
        _check(vm, model, rng.standard_normal(shape).astype("float32"))


# ---- self-attention ------------------------------------------------------------------------
@pytest.mark.parametrize("heads", [1, 2])
def test_attention_with_symbolic_sequence(heads):
    model = _attention(heads)
    mod, vm = _vm(model)
    shape = mod["main"].ret_struct_info.shape
    assert shape[0] == 1 and shape[2] == HIDDEN and not isinstance(shape[1], int)
    rng = np.random.default_rng(4)
    for s in (1, 5, 17):
        _check(vm, model, rng.standard_normal((1, s, HIDDEN)).astype("float32"))


def test_causal_attention_with_symbolic_batch_and_sequence():
    model = _attention(2, batch="B", causal=True)
    _, vm = _vm(model)
    rng = np.random.default_rng(5)
    for b, s in ((1, 1), (2, 5), (3, 17)):
        _check(vm, model, rng.standard_normal((b, s, HIDDEN)).astype("float32"))


# ---- If ------------------------------------------------------------------------------------
def _has_if(mod) -> bool:
    found = []

    class Finder(ExprVisitor):
        def visit_if_(self, e):
            found.append(e)
            super().visit_if_(e)

    Finder().visit_expr(mod["main"])
    return bool(found)


def _samples(n=4):
    rng = np.random.default_rng(6)
    a = np.abs(rng.standard_normal((n, 3))).astype("float32") + 0.1
    return a, -a


def test_if_on_a_runtime_condition_takes_each_branch():
    """y = If(ReduceSum(x) > 0, then: x * 2 + 1, else: Relu(x) - 3); the branches read x of
    the enclosing graph."""
    model = runtime_if()
    mod, vm = _vm(model)
    assert _has_if(mod)
    for x in _samples(2) + _samples(5):
        _check(vm, model, x)


def test_if_with_two_outputs_of_different_shapes():
    """then: (Concat(x, x) [2N, 3], x W); else: (Relu(x) [N, 3], -x); the first output is
    cast to a fresh dim, so Sigmoid after it still has a kernel; the condition is a [1] bool
    tensor (ReduceMax with keepdims, reshaped)."""
    w = numpy_helper.from_array(np.arange(9, dtype=np.float32).reshape(3, 3) / 10, "w")
    then_graph = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["t_out"], axis=0),
         helper.make_node("MatMul", ["x", "w"], ["t2"])], "then", [], [_out("t_out"), _out("t2")],
        initializer=[w])
    else_graph = _branch([helper.make_node("Relu", ["x"], ["e_out"]),
                          helper.make_node("Neg", ["x"], ["e2"])], ["e_out", "e2"])
    cond = [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=1),
            _const("zero", 0.0, np.float32), _const("one", [1]),
            helper.make_node("Greater", ["m", "zero"], ["c2"]),
            helper.make_node("Reshape", ["c2", "one"], ["cond"])]
    after = [helper.make_node("Sigmoid", ["a"], ["y"]), helper.make_node("Add", ["b", "x"], ["z"])]
    model = _if_model(cond, then_graph, else_graph, outputs=("a", "b"), after=after)
    _, vm = _vm(model)
    for x in _samples(3):
        _check(vm, model, x)


def test_if_on_a_constant_condition_is_folded_for_the_graph_executor():
    then_graph = _branch([helper.make_node("Relu", ["x"], ["t_out"])], ["t_out"])
    else_graph = _branch([helper.make_node("Neg", ["x"], ["e_out"])], ["e_out"])
    cond = [helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(
        np.asarray(False), "cond"))]
    model = _if_model(cond, then_graph, else_graph, x_shape=(2, 3))
    mod, params = from_onnx(model)
    assert not _has_if(mod)
    lib = relay.build(mod, target="llvm", params=params)
    gm = microruntime.graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    x = _samples(2)[0]
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), -x, rtol=RTOL, atol=ATOL)


def test_if_on_a_constant_condition_keeps_its_outputs_known():
    """The branch taken computes a shape (a constant); Expand after the If needs it while
    compiling, so what is known of the branch's outputs must stay known."""
    then_graph = _branch([_const("t_shape", [4, 2, 3])], ["t_shape"])
    else_graph = _branch([_const("e_shape", [1, 2, 3])], ["e_shape"])
    cond = [helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(
        np.asarray(True), "cond"))]
    expand = helper.make_node("Expand", ["x", "shape"], ["y"])
    model = _if_model(cond, then_graph, else_graph, outputs=("shape",), after=(expand,),
                      x_shape=(2, 3))
    mod, params = from_onnx(model)
    assert not _has_if(mod)
    lib = relay.build(mod, target="llvm", params=params)
    gm = microruntime.graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    x = _samples(2)[0]
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), np.broadcast_to(x, (4, 2, 3)))


def test_if_on_a_runtime_condition_is_refused_by_the_graph_executor():
    then_graph = _branch([helper.make_node("Relu", ["x"], ["t_out"])], ["t_out"])
    else_graph = _branch([helper.make_node("Neg", ["x"], ["e_out"])], ["e_out"])
    model = _if_model(_sum_positive(), then_graph, else_graph, x_shape=(2, 3))
    mod, params = from_onnx(model)
    with pytest.raises(CompilerError, match="an If on a run-time condition.*compiler.relax.build"):
        relay.build(mod, target="llvm", params=params)


def test_unsupported_operator_inside_a_branch_is_listed():
    then_graph = _branch([helper.make_node("NoSuchOp", ["x"], ["t_out"])], ["t_out"])
    else_graph = _branch([helper.make_node("Neg", ["x"], ["e_out"])], ["e_out"])
    model = _if_model(_sum_positive(), then_graph, else_graph)
    with pytest.raises(UnsupportedOpError, match=r"NoSuchOp\s+1 node"):
        from_onnx(model)


def test_if_condition_with_several_elements_is_refused():
    then_graph = _branch([helper.make_node("Relu", ["x"], ["t_out"])], ["t_out"])
    else_graph = _branch([helper.make_node("Neg", ["x"], ["e_out"])], ["e_out"])
    cond = [_const("zero", 0.0, np.float32), helper.make_node("Greater", ["x", "zero"], ["cond"])]
    model = _if_model(cond, then_graph, else_graph)
    with pytest.raises(CompilerError, match="condition must have exactly one element"):
        from_onnx(model)


# ---- Loop ----------------------------------------------------------------------------------
def _body(nodes, carried, outputs):
    ins = [helper.make_tensor_value_info("i", TensorProto.INT64, []),
           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])]
    ins += [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in carried]
    outs = [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [])]
    outs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
    return helper.make_graph(nodes, "body", ins, outs)


def _accumulate_model():
    """acc = x; while i < M and sum(acc) < 40: acc = acc * w + x + i (w a weight, x and the
    iteration read by the body)."""
    w = numpy_helper.from_array(np.asarray([0.5, 1.0, 1.5], np.float32), "w")
    body = _body([helper.make_node("Mul", ["acc", "w"], ["a1"]),
                  helper.make_node("Add", ["a1", "x"], ["a2"]),
                  helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                  helper.make_node("Add", ["a2", "fi"], ["acc_out"]),
                  helper.make_node("ReduceSum", ["acc_out"], ["s"], keepdims=0),
                  helper.make_node("Less", ["s", "limit"], ["cond_out"])], ["acc"], ["acc_out"])
    nodes = [_const("limit", 40.0, np.float32), _const("go", True, bool),
             helper.make_node("Loop", ["M", "go", "x"], ["y"], body=body)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    m = helper.make_tensor_value_info("M", TensorProto.INT64, [])
    graph = helper.make_graph(nodes, "g", [x, m], [_out("y")], initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_loop_with_runtime_trip_count_and_condition():
    model = _accumulate_model()
    mod, params = from_onnx(model)
    vm = VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for n, m in ((2, 0), (2, 3), (5, 7), (3, 200)):   # the last stops on the condition
        x = (rng.standard_normal((n, 3)) * 0.5 + 1).astype("float32")
        feeds = {"x": x, "M": np.asarray(m, np.int64)}
        got = vm["main"](x, feeds["M"]).numpy()
        np.testing.assert_allclose(got, sess.run(None, feeds)[0], rtol=RTOL, atol=ATOL)


def test_loop_of_many_iterations_runs_in_one_frame():
    """3000 iterations, more than the VM's call depth (256): the body's call of itself in
    tail position is a jump (compiler/relax/backend/vm/codegen.py)."""
    body = _body([helper.make_node("Add", ["acc", "x"], ["acc_out"]),
                  helper.make_node("Identity", ["cond"], ["cond_out"])], ["acc"], ["acc_out"])
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    m = helper.make_tensor_value_info("M", TensorProto.INT64, [])
    model = helper.make_model(helper.make_graph(nodes, "g", [x, m], [_out("y")]),
                              opset_imports=[helper.make_opsetid("", 17)])
    mod, params = from_onnx(model)
    vm = VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())
    x = np.full((2, 3), 0.5, np.float32)
    got = vm["main"](x, np.asarray(3000, np.int64)).numpy()
    np.testing.assert_allclose(got, x * 3001, rtol=1e-5)


def test_loop_whose_carried_value_grows():
    """acc = x; 3 times: acc = Concat(acc, x, axis=1) -> [N, 8]; the trip count is a
    constant and the condition is absent."""
    body = _body([helper.make_node("Concat", ["acc", "x"], ["acc_out"], axis=1),
                  helper.make_node("Identity", ["cond"], ["cond_out"])], ["acc"], ["acc_out"])
    nodes = [_const("M", 3), helper.make_node("Loop", ["M", "", "x"], ["y"], body=body),
             helper.make_node("Relu", ["y"], ["z"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])
    model = _model(nodes, [x], [_out("z")])
    _, vm = _vm(model)
    rng = np.random.default_rng(8)
    for n in (1, 4):
        _check(vm, model, rng.standard_normal((n, 2)).astype("float32"))


def test_loop_scan_outputs_are_refused():
    body = _body([helper.make_node("Identity", ["acc"], ["acc_out"]),
                  helper.make_node("Identity", ["acc"], ["scan"]),
                  helper.make_node("Identity", ["cond"], ["cond_out"])], ["acc"],
                 ["acc_out", "scan"])
    nodes = [_const("M", 2), helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], body=body)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])
    with pytest.raises(UnsupportedOpError, match="scan output"):
        from_onnx(_model(nodes, [x], [_out("y"), _out("ys")]))
