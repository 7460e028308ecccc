"""Run with a Python that has Apache TVM: builds Relax VM models into argv[1] and records
TVM's own VM outputs. Per model <name>: <name>.so (relax.build + export_library, target llvm)
and <name>.npz (inputs in0.., outputs out0..; several input sets for symbolic shapes)."""
import os
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
from tvm.script import relax as R


def mlp():
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, 16), "float32"))
    rng = np.random.default_rng(0)
    w1 = relax.const(rng.standard_normal((16, 32)).astype("float32"))
    w2 = relax.const(rng.standard_normal((32, 4)).astype("float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.matmul(x, w1)))
            y = bb.emit_output(relax.op.matmul(h, w2))
        bb.emit_func_output(y)
    return bb.get(), [[rng.standard_normal((2, 16)).astype("float32")]]


def onnx_model(nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return from_onnx(model, keep_params_in_input=False)


def cnn_bn(batch):
    rng = np.random.default_rng(1)
    arr = lambda name, a: onnx.numpy_helper.from_array(a.astype("float32"), name)  # noqa: E731
    inits = [arr("w", rng.standard_normal((4, 3, 3, 3)) * 0.3), arr("scale", rng.random(4) + 0.5),
             arr("bias", rng.standard_normal(4)), arr("mean", rng.standard_normal(4) * 0.1),
             arr("var", rng.random(4) + 0.5)]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    dim = "N" if batch is None else batch
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim, 4, 8, 8])
    mod = onnx_model(nodes, [x], [y], inits)
    sizes = [1, 3] if batch is None else [batch]
    return mod, [[rng.standard_normal((n, 3, 8, 8)).astype("float32")] for n in sizes]


def onnx_if():
    then_g = helper.make_graph([helper.make_node("Add", ["a", "a"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
    else_g = helper.make_graph([helper.make_node("Mul", ["a", "a"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    ins = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
           helper.make_tensor_value_info("a", TensorProto.FLOAT, [4])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]
    mod = onnx_model(nodes, ins, out, [])
    a = np.arange(4, dtype="float32") - 1.5
    return mod, [[np.array(True), a], [np.array(False), a]]


def main(out):
    models = {"mlp": mlp(), "cnn_bn": cnn_bn(2), "cnn_dyn": cnn_bn(None), "if": onnx_if()}
    for name, (mod, input_sets) in models.items():
        ex = relax.build(mod, target="llvm")
        path = os.path.join(out, name + ".so")
        ex.export_library(path)
        vm = relax.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())
        arrays = {}
        for k, inputs in enumerate(input_sets):
            res = vm["main"](*[tvm.runtime.tensor(i) for i in inputs])
            for j, i in enumerate(inputs):
                arrays[f"in{k}_{j}"] = i
            arrays[f"out{k}"] = res.numpy()
        np.savez(os.path.join(out, name + ".npz"), n=len(input_sets), **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
