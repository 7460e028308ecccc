"""Graphs that are wide or deep: a concatenation of 64 inputs (one kernel of 65 arguments,
whose argument checks nest hundreds of statements deep) and a chain of 500 elementwise
operators compile through relay.build and run correctly, from a graph-level module and from
ONNX; kernel names stay within what the runtime reads; input names it cannot read are refused
at compile time, and inputs named like C keywords or types compile with target "c"."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper

import microruntime as mr
from compiler import relay
from compiler.frontend import from_onnx
from compiler.ir.errors import IRError
from compiler.relax import BlockBuilder, Var
from compiler.relax import op as R
from compiler.relax.backend.names import KERNEL_NAME_LIMIT
from compiler.relax.struct_info import TensorStructInfo
from microruntime import graph_executor

SHAPE = (1, 2, 3, 3)


def _run(lib, **inputs):
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    gm.run(**inputs)
    return gm.get_output(0).numpy()


def _kernels(lib):
    return [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"]
            if n["op"] == "tvm_op"]


def _module(names, body):
    bb = BlockBuilder()
    xs = [Var(n, TensorStructInfo(SHAPE, "float32")) for n in names]
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": len(xs)})
    with bb.dataflow():
        out = bb.emit_output(body(bb, xs))
    bb.emit_func_output(out, xs)
    return bb.get()


def _inputs(names, seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(SHAPE).astype("float32") for n in names}


# The chain: x -> add x -> negative -> multiply by x -> sigmoid -> ..., 500 operators.
CHAIN = [lambda y, x: R.add(y, x), lambda y, x: R.negative(y),
         lambda y, x: R.multiply(y, x), lambda y, x: R.sigmoid(y)]
NP_CHAIN = [lambda y, x: y + x, lambda y, x: -y, lambda y, x: y * x,
            lambda y, x: 1 / (1 + np.exp(-y))]


def _chain_reference(x, n):
    y = x
    for i in range(n):
        y = NP_CHAIN[i % 4](y, x)
    return y


def test_concat_of_64_inputs(target):
    names = [f"x{i}" for i in range(64)]
    mod = _module(names, lambda bb, xs: R.concat(xs, axis=1))
    lib = relay.build(mod, target=target)
    inputs = _inputs(names)
    got = _run(lib, **inputs)
    np.testing.assert_array_equal(got, np.concatenate([inputs[n] for n in names], axis=1))


def test_chain_of_500_elementwise_operators():
    def body(bb, xs):
        y = xs[0]
        for i in range(500):
            y = bb.emit(CHAIN[i % 4](y, xs[0]))
        return y

    lib = relay.build(_module(["x"], body), target="llvm")
    kernels = _kernels(lib)
    assert len(kernels) > 1                      # cut into kernels of bounded depth
    assert all(len(k) <= KERNEL_NAME_LIMIT for k in kernels)
    x = _inputs(["x"])["x"]
    np.testing.assert_allclose(_run(lib, x=x), _chain_reference(x, 500), rtol=1e-5, atol=1e-6)


def _onnx(nodes, inputs, output):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT,
                                                                     list(SHAPE))
                                       for n in inputs],
                          [helper.make_empty_tensor_value_info(output)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def test_onnx_concat_of_64_inputs_and_chain_of_500():
    names = [f"x{i}" for i in range(64)]
    model = _onnx([helper.make_node("Concat", names, ["y"], axis=1)], names, "y")
    mod, params = from_onnx(model)
    inputs = _inputs(names, seed=1)
    got = _run(relay.build(mod, target="llvm", params=params), **inputs)
    np.testing.assert_array_equal(got, np.concatenate([inputs[n] for n in names], axis=1))

    ops = ["Add", "Neg", "Mul", "Sigmoid"]
    nodes, prev = [], "x"
    for i in range(500):
        op = ops[i % 4]
        args = [prev, "x"] if op in ("Add", "Mul") else [prev]
        nodes.append(helper.make_node(op, args, [f"t{i}"]))
        prev = f"t{i}"
    mod, params = from_onnx(_onnx(nodes, ["x"], prev))
    x = _inputs(["x"], seed=2)["x"]
    got = _run(relay.build(mod, target="llvm", params=params), x=x)
    np.testing.assert_allclose(got, _chain_reference(x, 500), rtol=1e-5, atol=1e-6)


def test_long_fused_names_are_shortened_and_distinct():
    # 16 operators fuse into one kernel whose full name is far over the limit
    def body(bb, xs):
        y = xs[0]
        for i in range(40):
            y = bb.emit(R.multiply(y, xs[0]) if i % 2 else R.add(y, xs[0]))
        return y

    lib = relay.build(_module(["x"], body), target="llvm")
    kernels = set(_kernels(lib))
    assert all(len(k) <= KERNEL_NAME_LIMIT for k in kernels)
    assert any(len(k) > 80 for k in kernels)     # prefix + hash, not cut at the prefix
    x = _inputs(["x"])["x"]
    want = x
    for i in range(40):
        want = want * x if i % 2 else want + x
    np.testing.assert_allclose(_run(lib, x=x), want, rtol=1e-5)


@pytest.mark.parametrize("name, phrase", [("x" * 600, "is 600 bytes long"),
                                          ("a\0b", "contains a NUL character")])
def test_unreadable_input_names_are_refused(name, phrase):
    mod = _module([name], lambda bb, xs: R.negative(xs[0]))
    with pytest.raises(IRError, match=phrase) as err:
        relay.build(mod, target="llvm")
    assert "input name" in str(err.value) and "rename the input" in str(err.value)


@pytest.mark.parametrize("name", ["float", "NULL", "int32_t", "DLTensor", "exp", "kiln_rc",
                                  "__tvm_ffi_main"])
def test_inputs_named_like_c_identifiers_compile_with_c(name):
    mod = _module([name, "y"], lambda bb, xs: R.add(xs[0], R.negative(xs[1])))
    lib = relay.build(mod, target="c")
    inputs = {name: _inputs(["a"])["a"], "y": _inputs(["b"], seed=3)["b"]}
    np.testing.assert_allclose(_run(lib, **inputs), inputs[name] - inputs["y"], rtol=1e-6)
