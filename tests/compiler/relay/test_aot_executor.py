"""relay.build(..., executor=Executor("aot")): the generated run function gives the graph
executor's outputs, to the bit, on every model of the model set (aot_model_set.py) and the
hand-written graph of tests/microruntime/graph_model.py, on llvm and c, through
microruntime.aot_executor.AotModule (TVM's API), in process and from an exported .so; the
header describes the entry point; mistakes are clear errors."""
import json
import os
import sys

import numpy as np
import pytest
from aot_model_set import NAMES, graph_outputs, model, same

import microruntime
from compiler import relay
from compiler.frontend import from_onnx
from compiler.frontend.testing import dynamic_models
from compiler.ir.errors import CompilerError, TargetError, UnsupportedOpError
from compiler.relax.backend.aot.factory import AOTExecutorFactoryModule
from compiler.relax.backend.aot.plan import make_plan
from compiler.relax.backend.graph.codegen import GraphPlan
from compiler.relax.backend.graph.plan_memory import MemoryPlan
from compiler.relay.backend import Executor, Runtime
from compiler.target import Target
from microruntime.aot_executor import AotExecutorError, AotModule

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "microruntime"))
import graph_model as gm  # noqa: E402


def _run(aot, inputs):
    aot.set_input(**inputs)
    aot.run()
    return [aot.get_output(i).numpy() for i in range(aot.get_num_outputs())]


@pytest.mark.parametrize("name", NAMES)
def test_aot_equals_graph_executor(name, target):
    mod, params, inputs = model(name)
    factory = relay.build(mod, target, params=params, executor=Executor("aot"))
    assert isinstance(factory, AOTExecutorFactoryModule)
    aot = AotModule(factory["default"](microruntime.cpu()))
    want = graph_outputs(name, target)
    assert same(_run(aot, inputs), want)
    assert same(_run(aot, inputs), want)  # a second run over the same workspace
    assert aot.get_num_inputs() == len(inputs)
    for k, key in enumerate(inputs):
        assert aot.get_input_index(key) == k and aot.get_input_name(k) == key
        np.testing.assert_array_equal(aot.get_input(key).numpy(), inputs[key])


def test_hand_written_graph(target, tmp_path):
    """The graph of graph_model.py (slots shared by hand) over its te kernels, planned by AOT."""
    lib = gm.kernels(target)
    x, y, w = gm.data()
    plan = make_plan(GraphPlan(gm.graph_json(), {"w": w}, list(gm.FUNCS), MemoryPlan({}, []),
                               0, 0))
    assert [t.home[0] for t in plan.tensors] == ["input", "input", "param", "workspace",
                                                 "workspace", "workspace", "output"]
    factory = AOTExecutorFactoryModule(plan, lib, Target(target))
    aot = AotModule(factory["default"](microruntime.cpu()))
    aot.run(x=x, y=y)
    np.testing.assert_allclose(aot.get_output(0).numpy(), gm.reference(x, y, w), rtol=1e-5,
                               atol=1e-5)


def test_exported_library_loads(tmp_path):
    mod, params, inputs = model("relax:conv_bn_relu_pool_dense")
    factory = relay.build(mod, "llvm", params=params, executor=Executor("aot"))
    path = str(tmp_path / "model.so")
    factory.export_library(path)
    lib = microruntime.load_module(path)
    aot = AotModule(lib["default"](microruntime.cpu()))
    assert same(_run(aot, inputs), graph_outputs("relax:conv_bn_relu_pool_dense", "llvm"))
    meta = json.loads(lib["tvmgen_default_get_metadata"]())
    assert meta["workspace_bytes"] == factory.plan.workspace_bytes == aot.get_workspace_size()
    with pytest.raises(Exception, match="runs on the CPU"):
        lib["default"](microruntime.device("opencl", 0))


def test_header_describes_the_entry_point():
    mod, params, inputs = model("onnx:mlp")
    factory = relay.build(mod, "c", params=params, executor=Executor("aot"),
                          runtime=Runtime("crt", {"system-lib": True}), mod_name="mlp")
    header = factory.get_header()
    (name, x), = inputs.items()
    assert "int32_t tvmgen_mlp_run(struct tvmgen_mlp_inputs* inputs" in header
    assert f"#define TVMGEN_MLP_{name.upper()}_SIZE {x.nbytes}" in header
    assert f"#define TVMGEN_MLP_WORKSPACE_SIZE {factory.plan.workspace_bytes}" in header
    assert "struct tvmgen_mlp_workspace_pools {\n  void* global_workspace;" in header
    source = factory.get_source("c")
    # the weights are constant data passed in place; the tensors sit at planned offsets
    assert source.count("static const unsigned char kiln_param_") == len(factory.plan.params)
    assert "__tvm_ffi_mlp(" not in source  # a system library is called from C, not by name
    aot = AotModule(factory["mlp"](microruntime.cpu()), mod_name="mlp")
    assert same(_run(aot, inputs), graph_outputs("onnx:mlp", "c"))


def test_mistakes_are_clear():
    mod, params, inputs = model("relax:mlp")
    with pytest.raises(TargetError, match="no option 'interface_api'"):
        Executor("aot", {"interface_api": "c"})
    with pytest.raises(TargetError, match="unknown executor"):
        Executor("vm")
    with pytest.raises(TargetError, match="runs on the CPU"):
        relay.build(mod, "opencl", params=params, executor=Executor("aot"))
    with pytest.raises(CompilerError, match="C identifier"):
        relay.build(mod, "c", params=params, executor=Executor("aot"), mod_name="my-model")
    factory = relay.build(mod, "c", params=params, executor=Executor("aot"))
    with pytest.raises(TargetError, match="runs on the CPU"):
        factory["default"](microruntime.device("opencl", 0))
    aot = AotModule(factory["default"](microruntime.cpu()))
    with pytest.raises(AotExecutorError, match="no input 'nope'"):
        aot.set_input("nope", inputs["x"])
    with pytest.raises(AotExecutorError, match="no AOT model named 'other'"):
        AotModule(factory["default"](microruntime.cpu()), mod_name="other")
    with pytest.raises(ValueError, match="shape"):
        aot.set_input("x", np.zeros((1, 1), "float32"))


def test_control_flow_goes_to_the_vm():
    mod, params = from_onnx(dynamic_models.runtime_if(x_shape=(2, 3)))
    with pytest.raises(UnsupportedOpError, match="the AOT executor runs one sequence of "
                       r"kernels.*relax.build"):
        relay.build(mod, "c", params=params, executor=Executor("aot"))
