"""topi.take with mode "raise" (ONNX Gather's semantics): indices in [-n, 0) count from the
end, any other index outside [0, n) makes the kernel fail with an IndexError naming it (no
clamping, no truncation of int64 indices); the check sits outside the loops it does not depend
on. ONNX Gather with run-time indices uses it, and a 0-d index drops the axis, as onnxruntime
does."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import microruntime as mr
from compiler import build, lower, relay, te, topi
from compiler.frontend import from_onnx
from microruntime import graph_executor


def _take_module(target, dtype):
    w = te.placeholder((10, 4), name="W")
    idx = te.placeholder((3,), dtype=dtype, name="I")
    out = topi.take(w, idx, 0, mode="raise")
    s = te.create_schedule(out.op)
    return s, [w, idx, out], build(s, [w, idx, out], target=target, name="take")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_in_range_and_negative_indices(target, dtype):
    _, _, m = _take_module(target, dtype)
    w = np.arange(40, dtype="float32").reshape(10, 4)
    idx = np.array([1, -1, -10], dtype=dtype)
    out = mr.nd.empty((3, 4), "float32")
    m["take"](mr.nd.array(w), mr.nd.array(idx), out)
    np.testing.assert_array_equal(out.numpy(), np.take(w, idx, axis=0))


@pytest.mark.parametrize("bad", [10, 1000, -11, 2 ** 40])
def test_out_of_range_index_raises(target, bad):
    _, _, m = _take_module(target, "int64")
    w = np.zeros((10, 4), "float32")
    idx = np.array([0, bad, 1], dtype="int64")
    with pytest.raises(IndexError, match=rf"take: index {bad} out of range \[-10, 10\) on "
                                         r"axis 0"):
        m["take"](mr.nd.array(w), mr.nd.array(idx), mr.nd.empty((3, 4), "float32"))


def test_check_is_hoisted_out_of_loops_it_does_not_use():
    s, args, _ = _take_module("llvm", "int64")
    text = str(lower(s, args, name="take", simple_mode=True))
    lines = text.splitlines()
    check = next(i for i, line in enumerate(lines) if line.strip().startswith("assert"))
    inner = next(i for i, line in enumerate(lines) if "for i1" in line)
    assert check < inner and "IndexError" in lines[check]
    assert "checked_index" not in text


def _model(nodes, inputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info("y")],
                          list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def _ort(model, feed):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feed)[0]


def _kiln(model, feed, target="llvm"):
    mod, params = from_onnx(model)
    gm = graph_executor.GraphModule(relay.build(mod, target=target, params=params)["default"](
        mr.cpu()))
    gm.run(**feed)
    return gm.get_output(0).numpy()


def test_onnx_gather_run_time_indices(target):
    model = _model([helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10, 4]),
                    helper.make_tensor_value_info("i", TensorProto.INT64, [3])])
    x = np.random.default_rng(0).standard_normal((10, 4)).astype("float32")
    good = {"x": x, "i": np.array([0, -1, 9], "int64")}
    np.testing.assert_array_equal(_kiln(model, good, target), _ort(model, good))
    for bad in (1000, 2 ** 40):
        feed = {"x": x, "i": np.array([1, bad, 2], "int64")}
        with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
            _ort(model, feed)            # onnxruntime refuses it too
        with pytest.raises(IndexError, match=f"index {bad} out of range"):
            _kiln(model, feed, target)


@pytest.mark.parametrize("source", ["Constant", "initializer"])
@pytest.mark.parametrize("axis, index", [(1, 2), (1, -1), (0, 0), (2, 7)])
def test_onnx_gather_with_a_0d_index(source, axis, index):
    value = numpy_helper.from_array(np.array(index, dtype="int64"), "i")
    nodes = [helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)]
    inits = []
    if source == "Constant":
        nodes.insert(0, helper.make_node("Constant", [], ["i"], value=value))
    else:
        inits.append(value)
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
                   inits)
    feed = {"x": np.random.default_rng(1).standard_normal((1, 4, 8)).astype("float32")}
    want = _ort(model, feed)
    got = _kiln(model, feed)
    assert got.shape == want.shape and got.ndim == 2
    np.testing.assert_array_equal(got, want)
