"""LSTM, GRU and RNN and IsNaN / IsInf: one-node models built with onnx.helper, compiled with
relay.build for llvm, run on the graph executor and compared with onnxruntime. A GRU or LSTM
with the default activations runs its time loop as one operator (nn.gru_sequence /
nn.lstm_sequence: checked on llvm and c, on the VM, and unrolled again for OpenCL); other
activations and RNN take the unrolled conversion."""
import numpy as np
import pytest
from kiln_onnx_backend import compile_model
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import ort_run, rand

from compiler import relax, relay
from compiler.frontend import ModelError, UnsupportedOpError, from_onnx
from compiler.relax import expr as X

SEQ, BATCH, INPUT, HIDDEN = 3, 3, 4, 6
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# the names of the inputs in ONNX order (X, W, R, B, sequence_lens, initial_h, initial_c, P)
ORDER = ("x", "w", "r", "b", "lens", "h0", "c0", "p")


def _model(op, arrays, attrs, n_out, feeds=("x",)):
    """A one-node model: `arrays` ({name: array or None} in ONNX input order; None is an
    absent input) are initializers but for the graph inputs `feeds`."""
    names = [n if arrays.get(n) is not None else "" for n in ORDER[:max(
        ORDER.index(n) for n in arrays) + 1]]
    while names and not names[-1]:
        names.pop()
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, arrays[n].shape)
           for n in feeds]
    inits = [numpy_helper.from_array(arrays[n], n) for n in names if n and n not in feeds]
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name="rnn0", **attrs)
    graph = helper.make_graph([node], "g", ins,
                              [helper.make_empty_tensor_value_info(o) for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    return model


def _arrays(op, direction, layout=0, bias=True, initial=True, peepholes=False, seq=SEQ):
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = (BATCH, seq, INPUT) if layout else (seq, BATCH, INPUT)
    s_shape = (BATCH, dirs, HIDDEN) if layout else (dirs, BATCH, HIDDEN)
    a = {"x": rand(*x_shape, seed=1),
         "w": rand(dirs, g * HIDDEN, INPUT, seed=2) * 0.5,
         "r": rand(dirs, g * HIDDEN, HIDDEN, seed=3) * 0.5,
         "b": rand(dirs, 2 * g * HIDDEN, seed=4) * 0.5 if bias else None,
         "h0": rand(*s_shape, seed=5) if initial else None}
    if op == "LSTM":
        a["c0"] = rand(*s_shape, seed=6) if initial else None
        a["p"] = rand(dirs, 3 * HIDDEN, seed=7) * 0.5 if peepholes else None
    return {k: (None if v is None else v.astype("float32")) for k, v in a.items()}


def _compare(model, feed, rtol=1e-4, atol=1e-5, target="llvm"):
    want = ort_run(model, feed)
    mod, params = from_onnx(model)
    got = compile_model(mod, params, target).run(feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _check(op, direction, layout=0, bias=True, initial=True, peepholes=False, n_out=None,
           feeds=("x",), target="llvm", **attrs):
    arrays = _arrays(op, direction, layout, bias, initial, peepholes)
    n_out = n_out or (3 if op == "LSTM" else 2)
    attrs = {"hidden_size": HIDDEN, "direction": direction, "layout": layout, **attrs}
    model = _model(op, arrays, attrs, n_out, feeds)
    _compare(model, {n: arrays[n] for n in feeds}, target=target)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions(op, direction):
    _check(op, direction)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bias,initial", [(False, False), (True, False), (False, True)])
def test_without_biases_or_initial_states(op, bias, initial):
    _check(op, "bidirectional", bias=bias, initial=initial)


@pytest.mark.parametrize("before_reset", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("initial", [True, False])
def test_gru_linear_before_reset(before_reset, direction, initial):
    _check("GRU", direction, initial=initial, linear_before_reset=before_reset)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_layout_1(op):
    """Batch-major tensors (onnxruntime runs only layout 0: the reference is the layout-0
    model on the transposed tensors)."""
    arrays = _arrays(op, "bidirectional", layout=1)
    n_out = 3 if op == "LSTM" else 2
    attrs = {"hidden_size": HIDDEN, "direction": "bidirectional"}
    seq_major = {k: (v if v is None or k not in ("x", "h0", "c0") else
                     np.ascontiguousarray(v.transpose(1, 0, 2))) for k, v in arrays.items()}
    want = ort_run(_model(op, seq_major, attrs, n_out), {"x": seq_major["x"]})
    want = [want[0].transpose(2, 0, 1, 3)] + [w.transpose(1, 0, 2) for w in want[1:]]
    mod, params = from_onnx(_model(op, arrays, {**attrs, "layout": 1}, n_out))
    got = compile_model(mod, params).run({"x": arrays["x"]})
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("initial", [True, False])
def test_lstm_peepholes(initial):
    _check("LSTM", "bidirectional", peepholes=True, initial=initial)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_clip(op):
    _check(op, "forward", clip=0.7)


def test_activations_with_alpha_and_beta():
    # f: HardSigmoid (alpha, beta), g: LeakyRelu (alpha), h: ScaledTanh (alpha, beta)
    _check("LSTM", "forward", activations=["HardSigmoid", "LeakyRelu", "ScaledTanh"],
           activation_alpha=[0.3, 0.05, 1.5], activation_beta=[0.4, 0.8])
    _check("RNN", "bidirectional", activations=["Relu", "Softsign"])
    _check("GRU", "forward", activations=["Sigmoid", "Elu"], activation_alpha=[0.5])


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_only_some_outputs(op):
    _check(op, "bidirectional", n_out=1)          # Y only
    arrays = _arrays(op, "reverse")
    names = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    attrs = {"hidden_size": HIDDEN, "direction": "reverse"}
    model = _model(op, arrays, attrs, len(names))
    model.graph.node[0].output[0] = ""            # Y_h (and Y_c) without Y
    del model.graph.output[0]
    _compare(model, {"x": arrays["x"]})


def test_weights_and_states_fed_at_run_time():
    feeds = ("x", "w", "r", "b", "h0", "c0")
    _check("LSTM", "bidirectional", feeds=feeds)
    _check("GRU", "reverse", feeds=feeds[:5], linear_before_reset=1)


def test_full_sequence_lens_is_accepted():
    arrays = _arrays("GRU", "forward")
    arrays["lens"] = np.full(BATCH, SEQ, "int32")
    model = _model("GRU", arrays, {"hidden_size": HIDDEN}, 2)
    _compare(model, {"x": arrays["x"]})


def test_shorter_sequence_lens_is_refused():
    arrays = _arrays("LSTM", "forward")
    arrays["lens"] = np.array([SEQ, 2, SEQ], "int32")
    model = _model("LSTM", arrays, {"hidden_size": HIDDEN}, 3)
    with pytest.raises(UnsupportedOpError, match=r"sequence_lens \[3, 2, 3\] \(only "
                                                 r"sequences of the full length 3"):
        from_onnx(model)


def test_sequence_lens_at_run_time_is_refused():
    arrays = _arrays("RNN", "forward")
    arrays["lens"] = np.full(BATCH, SEQ, "int32")
    model = _model("RNN", arrays, {"hidden_size": HIDDEN}, 2)
    model.graph.input.append(helper.make_tensor_value_info("lens", TensorProto.INT32,
                                                           (BATCH,)))
    del model.graph.initializer[[i.name for i in model.graph.initializer].index("lens")]
    with pytest.raises(UnsupportedOpError, match="sequence_lens computed at run time"):
        from_onnx(model)


def test_input_forget_is_refused():
    arrays = _arrays("LSTM", "forward")
    model = _model("LSTM", arrays, {"hidden_size": HIDDEN, "input_forget": 1}, 3)
    with pytest.raises(UnsupportedOpError, match="input_forget=1"):
        from_onnx(model)


def test_unknown_activation_is_refused():
    arrays = _arrays("RNN", "forward")
    model = _model("RNN", arrays, {"hidden_size": HIDDEN, "activations": ["Swish"]}, 2)
    with pytest.raises(UnsupportedOpError, match="the activation 'Swish'"):
        from_onnx(model)


def test_weight_shape_mismatch_is_a_model_error():
    arrays = _arrays("GRU", "forward")
    model = _model("GRU", arrays, {"hidden_size": HIDDEN + 1}, 2)
    with pytest.raises(ModelError, match=r"W has shape \(1, 18, 4\).*should be \(1, 21, 4\)"):
        from_onnx(model)


# ---- the time loop as one operator ----------------------------------------------------------
def _ops(mod):
    """The names of the operators the converted model's main function calls."""
    return [b.value.op.name for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def _layout_1_reference(op, arrays, attrs, n_out):
    """onnxruntime runs only layout 0: the outputs of the layout-0 model on the transposed
    tensors, transposed back."""
    seq_major = {k: (v if v is None or k not in ("x", "h0", "c0") else
                     np.ascontiguousarray(v.transpose(1, 0, 2))) for k, v in arrays.items()}
    want = ort_run(_model(op, seq_major, attrs, n_out), {"x": seq_major["x"]})
    return [want[0].transpose(2, 0, 1, 3)] + [w.transpose(1, 0, 2) for w in want[1:]]


SEQUENCE_CASES = [
    ("GRU", "forward", 0, True, {"linear_before_reset": 0}),
    ("GRU", "bidirectional", 0, False, {"linear_before_reset": 1}),
    ("GRU", "reverse", 1, True, {"linear_before_reset": 0, "clip": 0.7}),
    ("GRU", "bidirectional", 1, False, {"linear_before_reset": 0}),
    ("LSTM", "forward", 0, False, {}),
    ("LSTM", "bidirectional", 1, True, {"clip": 0.9}),
    ("LSTM", "reverse", 0, True, {}),
]


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("op,direction,layout,initial,attrs", SEQUENCE_CASES)
def test_sequence_op_matches_onnxruntime(target, op, direction, layout, initial, attrs):
    arrays = _arrays(op, direction, layout=layout, initial=initial)
    n_out = 3 if op == "LSTM" else 2
    attrs = {"hidden_size": HIDDEN, "direction": direction, **attrs}
    if layout:
        want = _layout_1_reference(op, arrays, attrs, n_out)
    model = _model(op, arrays, {**attrs, "layout": layout}, n_out)
    if not layout:
        want = ort_run(model, {"x": arrays["x"]})
    mod, params = from_onnx(model)
    assert f"relax.nn.{op.lower()}_sequence" in _ops(mod)
    got = compile_model(mod, params, target).run({"x": arrays["x"]})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_lstm_peepholes_in_the_sequence_op():
    arrays = _arrays("LSTM", "bidirectional", peepholes=True)
    model = _model("LSTM", arrays, {"hidden_size": HIDDEN, "direction": "bidirectional"}, 3)
    assert "relax.nn.lstm_sequence" in _ops(from_onnx(model)[0])
    _compare(model, {"x": arrays["x"]})


def test_other_activations_take_the_unrolled_conversion():
    arrays = _arrays("GRU", "bidirectional")
    attrs = {"hidden_size": HIDDEN, "direction": "bidirectional",
             "activations": ["Sigmoid", "Relu", "HardSigmoid", "Tanh"]}
    model = _model("GRU", arrays, attrs, 2)
    ops = _ops(from_onnx(model)[0])
    assert "relax.nn.gru_sequence" not in ops and "relax.nn.dense" in ops
    _compare(model, {"x": arrays["x"]})


def test_sequence_op_makes_few_graph_nodes():
    """A 2-direction GRU of 8 steps: a handful of kernels (projection, the time loop, the
    outputs), not a few per step."""
    seq = 8
    arrays = _arrays("GRU", "bidirectional", seq=seq)
    model = _model("GRU", arrays, {"hidden_size": HIDDEN, "direction": "bidirectional",
                                   "linear_before_reset": 1}, 2)
    mod, params = from_onnx(model)
    graph = relay.build(mod, target="llvm", params=params).get_graph_json()
    import json
    nodes = json.loads(graph)["nodes"]
    kernels = [n for n in nodes if n["op"] == "tvm_op"]
    assert len(kernels) <= 4, [n["attrs"]["func_name"] for n in kernels]
    assert any("gru_sequence" in n["attrs"]["func_name"] for n in kernels)


def test_sequence_op_on_the_vm():
    import microruntime as mr
    from microruntime.relax_vm import VirtualMachine
    arrays = _arrays("LSTM", "bidirectional")
    model = _model("LSTM", arrays, {"hidden_size": HIDDEN, "direction": "bidirectional"}, 3)
    want = ort_run(model, {"x": arrays["x"]})
    mod, params = from_onnx(model)
    vm = VirtualMachine(relax.build(mod, target="llvm", params=params), mr.cpu())
    got = vm["main"](arrays["x"])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_sequence_op_on_opencl(op):
    """A GPU target unrolls the time loop again (decompose_recurrent)."""
    import microruntime as mr
    from microruntime import graph_executor
    if not mr.opencl().exist:
        pytest.skip("no OpenCL device (apt-get install pocl-opencl-icd)")
    arrays = _arrays(op, "bidirectional")
    model = _model(op, arrays, {"hidden_size": HIDDEN, "direction": "bidirectional"},
                   3 if op == "LSTM" else 2)
    want = ort_run(model, {"x": arrays["x"]})
    mod, params = from_onnx(model)
    g = graph_executor.GraphModule(relay.build(mod, target="opencl", params=params)["default"](
        mr.opencl()))
    g.set_input("x", arrays["x"])
    g.run()
    for i, w in enumerate(want):
        np.testing.assert_allclose(g.get_output(i).numpy(), w, rtol=1e-4, atol=1e-4)


# ---- IsNaN / IsInf ------------------------------------------------------------------------
SPECIAL = np.array([[1.5, np.nan, -np.inf, np.inf], [0.0, -0.0, -np.nan, 3e38],
                    [np.inf, -2.0, np.nan, -np.inf]], "float32")


def _unary_model(op, x, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


def _run(model, x, target="llvm"):
    mod, params = from_onnx(model)
    return compile_model(mod, params, target).run({"x": x})[0]


def test_isnan():
    got = _run(_unary_model("IsNaN", SPECIAL), SPECIAL)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.isnan(SPECIAL))


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf(pos, neg):
    got = _run(_unary_model("IsInf", SPECIAL, detect_positive=pos, detect_negative=neg),
               SPECIAL)
    want = (np.isposinf(SPECIAL) & bool(pos)) | (np.isneginf(SPECIAL) & bool(neg))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


def test_isnan_and_isinf_stay_exact_under_fast_math():
    target = "llvm -fast-math"
    np.testing.assert_array_equal(_run(_unary_model("IsNaN", SPECIAL), SPECIAL, target),
                                  np.isnan(SPECIAL))
    np.testing.assert_array_equal(_run(_unary_model("IsInf", SPECIAL), SPECIAL, target),
                                  np.isinf(SPECIAL))


def test_isnan_feeds_a_mask():
    """The attention-mask pattern: where(isnan(x), 0, x)."""
    nodes = [helper.make_node("IsNaN", ["x"], ["m"]),
             helper.make_node("Where", ["m", "zero", "x"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SPECIAL.shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.zeros((), "float32"), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    got = _run(model, SPECIAL)
    np.testing.assert_array_equal(got, np.where(np.isnan(SPECIAL), 0, SPECIAL))
