"""from_onnx: nodes evaluated while importing (any operator whose inputs are all known, by the
converters or by onnx's reference evaluator), the error listing the operators the importer
cannot handle, and invalid ONNX refused. Each failing model is built here with onnx.helper;
`models/` holds the same invalid models as small .onnx files (written by
`python tests/compiler/frontend/test_onnx_import_checks.py`)."""
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import check, interpret, rand

from compiler.cli import main
from compiler.frontend import ModelError, UnsupportedOpError, from_onnx
from compiler.frontend.onnx_support import unsupported_ops
from compiler.relax import expr as X

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def _ops(mod):
    return [b.value.op.name for blk in mod["main"].body.blocks for b in blk.bindings
            if isinstance(b.value, X.Call)]


def _model(nodes, inputs, inits=(), opset=13, outputs=("y",)):
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    graph = helper.make_graph(nodes, "g", ins, outs,
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


# ---- evaluated while importing ------------------------------------------------------------
def test_shape_subgraph_of_an_operator_without_converter_folds():
    # BitwiseAnd has no converter: here it only computes the shape of a Reshape
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("BitwiseAnd", ["s", "mask"], ["t"], name="and"),
             helper.make_node("Concat", ["t", "three"], ["s2"], axis=0, name="cat"),
             helper.make_node("Reshape", ["x", "s2"], ["y"], name="reshape")]
    model = _model(nodes, {"x": [4, 6]}, [("mask", np.array([7, 2], "int64")),
                                          ("three", np.array([3], "int64"))], opset=18)
    assert unsupported_ops(model.graph) == {}
    mod, params = from_onnx(model)
    assert _ops(mod) == ["relax.reshape"] and params == {}
    assert tuple(mod["main"].ret_struct_info.shape) == (4, 2, 3)
    check(model, {"x": rand(4, 6)})


def test_weights_through_unsupported_operators_become_weights():
    # Hardmax of a weight, then a MatMul at run time: the folded result is the parameter
    nodes = [helper.make_node("Hardmax", ["w"], ["hw"], name="hm"),
             helper.make_node("MatMul", ["x", "hw"], ["y"], name="mm")]
    w = rand(3, 4, seed=1)
    model = _model(nodes, {"x": [2, 3]}, [("w", w)])
    mod, params = from_onnx(model)
    assert list(params) == ["hw"] and _ops(mod) == ["relax.matmul"]
    np.testing.assert_array_equal(params["hw"], np.eye(4, dtype="float32")[w.argmax(1)])
    check(model, {"x": rand(2, 3)})


def test_supported_operator_variant_falls_back_to_the_reference():
    # Pad mode "wrap" has no converter path, but on constants it is evaluated while importing
    nodes = [helper.make_node("Pad", ["c", "pads"], ["p"], mode="wrap", name="pad"),
             helper.make_node("Add", ["x", "p"], ["y"], name="add")]
    c = np.arange(6, dtype="float32").reshape(2, 3)
    model = _model(nodes, {"x": [2, 5]}, [("c", c), ("pads", np.array([0, 1, 0, 1], "int64"))])
    mod, params = from_onnx(model)
    assert _ops(mod) == ["relax.add"]
    check(model, {"x": rand(2, 5)})


def test_nonzero_of_a_constant_feeds_a_run_time_gather():
    nodes = [helper.make_node("NonZero", ["mask"], ["nz"], name="nonzero"),
             helper.make_node("Transpose", ["nz"], ["idx"], name="t"),
             helper.make_node("GatherND", ["x", "idx"], ["y"], name="gather")]
    mask = np.array([[1, 0, 0], [0, 1, 1]], bool)
    model = _model(nodes, {"x": [2, 3]}, [("mask", mask)])
    mod, _ = from_onnx(model)
    assert "relax.take" in _ops(mod) and len(_ops(mod)) == 2
    check(model, {"x": rand(2, 3)})


def test_random_operators_are_not_evaluated_while_importing():
    nodes = [helper.make_node("RandomNormal", [], ["r"], shape=[2, 3], name="rnd"),
             helper.make_node("Add", ["x", "r"], ["y"], name="add")]
    with pytest.raises(UnsupportedOpError, match=r"run-time path.*\n  RandomNormal  1 node"):
        from_onnx(_model(nodes, {"x": [2, 3]}))


# ---- the error listing what the importer cannot handle ---------------------------------------
def test_error_separates_runtime_and_constant_only_operators():
    nodes = [helper.make_node("Foo", ["c"], ["fc"], domain="com.example", name="foo_c"),
             helper.make_node("Hardmax", ["x"], ["h"], name="hm"),
             helper.make_node("Add", ["h", "fc"], ["y"], name="add")]
    model = _model(nodes, {"x": [2, 3]}, [("c", rand(2, 3))])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnsupportedOpError) as e:
        from_onnx(model)
    lines = str(e.value).splitlines()
    assert lines[0] == "the model uses 2 operators the ONNX frontend cannot handle (2 nodes):"
    assert lines[1].startswith("on the run-time path")
    assert lines[2] == "  Hardmax  1 node: 'hm'"
    assert lines[3].startswith("only computing constants, but they cannot be evaluated")
    assert lines[4].startswith("  com.example.Foo  1 node: 'foo_c' (onnx's reference "
                               "evaluator has no operators of domain 'com.example')")
    assert lines[5].startswith("what to do: ")


def test_error_of_many_nodes_stays_short():
    nodes = [helper.make_node("Hardmax", ["x" if i == 0 else f"h{i - 1}"],
                              ["y" if i == 199 else f"h{i}"], name=f"hm{i}") for i in range(200)]
    with pytest.raises(UnsupportedOpError) as e:
        from_onnx(_model(nodes, {"x": [2, 3]}))
    msg = str(e.value)
    assert "  Hardmax  200 nodes: 'hm0', 'hm1', 'hm2', ... (197 more)" in msg
    assert len(msg) < 600 and max(len(line) for line in msg.splitlines()) < 250


def test_cli_prints_one_line_and_no_traceback(tmp_path, capsys):
    path = str(tmp_path / "hardmax.onnx")
    onnx.save(_model([helper.make_node("Hardmax", ["x"], ["y"], name="hm")], {"x": [2, 3]}),
              path)
    assert main(["compile", path, "--quiet", "-o", str(tmp_path / "m.so")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the model uses 1 operator ")
    assert "Hardmax 1 node: 'hm'" in err[0] and "Traceback" not in err[0]


# ---- invalid ONNX -----------------------------------------------------------------------------
def two_nodes_write_one_tensor():
    nodes = [helper.make_node("Relu", ["x"], ["t"], name="first"),
             helper.make_node("Neg", ["x"], ["t"], name="second"),
             helper.make_node("Identity", ["t"], ["y"], name="out")]
    return _model(nodes, {"x": [2, 3]})


def duplicate_initializers():
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return _model(nodes, {"x": [2, 3]}, [("w", rand(2, 3)), ("w", rand(2, 3, seed=1))])


def unknown_opset():
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], {"x": [2, 3]},
                  opset=999)


INVALID = {
    "two_nodes_write_one_tensor": (two_nodes_write_one_tensor,
                                   r"node 'second' \(Neg\) writes 't', which node 'first' "
                                   r"\(Relu\) already defines"),
    "duplicate_initializers": (duplicate_initializers, "two initializers are named 'w'"),
    "unknown_opset": (unknown_opset, "imports opset 999, but no such opset"),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_models_are_refused(name):
    make, message = INVALID[name]
    with pytest.raises(ModelError, match=message):
        from_onnx(make())
    path = os.path.join(MODELS, f"{name}.onnx")
    with pytest.raises(ModelError, match=message):
        from_onnx(path)


def test_node_output_shadowing_an_input_and_opset_argument():
    model = _model([helper.make_node("Relu", ["x"], ["x"], name="r")], {"x": [2]},
                   outputs=("x",))
    with pytest.raises(ModelError, match="writes 'x', which a graph input already defines"):
        from_onnx(model)
    with pytest.raises(ModelError, match="opset=999 was given, but no such opset"):
        from_onnx(_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}), opset=999)
    # an input that also has an initializer (its default value) stays valid
    model = _model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]},
                   [("x", np.ones(2, "float32"))])
    assert interpret(model, {})[0].tolist() == [1.0, 1.0]


if __name__ == "__main__":
    os.makedirs(MODELS, exist_ok=True)
    for name, (make, _) in sorted(INVALID.items()):
        onnx.save(make(), os.path.join(MODELS, f"{name}.onnx"))
        print(os.path.join(MODELS, f"{name}.onnx"), file=sys.stderr)
