"""Winograd weights transformed at load: a graph executor build stores the original 3x3 weight
(the file keeps the ONNX size) and a kernel on it that the runtime's executor runs once after
its parameters are set, and again only when one is set anew."""
import json

import numpy as np
import pytest

import microruntime as mr
from compiler import build, relax, relay, te, topi
from compiler.relax import op
from compiler.relax import script as R
from compiler.relay.build_module import plan
from compiler.topi.nn.winograd import winograd_weight_transform, winograd_weight_transform_compute
from microruntime import graph_executor

C, H = 32, 8


def _conv_model(seed=0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((C, C, 3, 3)) / np.sqrt(9 * C)).astype("float32")
    x = relax.Var("x", R.Tensor((1, C, H, H), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(op.nn.relu(op.nn.conv2d(x, relax.const(w), padding=1)))
        bb.emit_func_output(y)
    return bb.get(), w


def _reference(x, w):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    out = np.zeros((1, C, H, H))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + H, j:j + H], w[:, :, i, j])
    return np.maximum(out, 0)


def _transform_nodes(graph_json):
    return [n for n in json.loads(graph_json)["nodes"]
            if "winograd_weight_transform" in n["name"]]


def test_graph_build_stores_the_original_weight_and_transforms_it_once():
    mod, w = _conv_model()
    lib = relay.build(mod, "llvm")
    assert len(_transform_nodes(lib.get_graph_json())) == 1
    # the weight is stored blocked but not transformed: 3x3 taps, C*C*9 values
    assert sum(p.size for p in lib.get_params().values()) == w.size
    g = graph_executor.GraphModule(lib["default"](mr.cpu()))
    x = np.random.default_rng(1).standard_normal((1, C, H, H)).astype("float32")
    g.set_input("x", x)
    g.run()
    first = g.get_output(0).numpy()
    np.testing.assert_allclose(first, _reference(x, w), rtol=1e-4, atol=1e-4)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), first)


def test_setting_a_parameter_again_recomputes_its_transform():
    mod, w = _conv_model()
    lib = relay.build(mod, "llvm")
    (name, blocked), = lib.get_params().items()
    g = graph_executor.GraphModule(lib["default"](mr.cpu()))
    x = np.random.default_rng(2).standard_normal((1, C, H, H)).astype("float32")
    g.set_input("x", x)
    g.run()
    g.load_params(mr.save_param_dict({name: blocked.numpy() * 2}))
    g.run()
    np.testing.assert_allclose(g.get_output(0).numpy(), _reference(x, w * 2), rtol=1e-4,
                               atol=1e-4)


def test_vm_and_aot_builds_keep_the_weight_transformed_now():
    """They run every kernel of every call, so the transform is done while compiling."""
    mod, w = _conv_model()
    _, graph = plan(mod, executor="AOT")
    assert not _transform_nodes(graph.graph_json)
    assert sum(p.size for p in graph.params.values()) == 16 * C * C   # F(2, 3): 4 x 4 points
    vm = mr.relax_vm.VirtualMachine(relax.build(mod, "llvm"), mr.cpu())
    x = np.random.default_rng(3).standard_normal((1, C, H, H)).astype("float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), _reference(x, w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_transform_kernel_matches_the_compile_time_transform(target):
    w = te.placeholder((2, 3, 3, 3, 4, 8), name="w")
    u = winograd_weight_transform_compute(w, 2)
    f = build(topi.generic.default_schedule([u]), [w, u], target)
    wn = np.random.default_rng(4).standard_normal((2, 3, 3, 3, 4, 8)).astype("float32")
    un = mr.nd.empty((16, 2, 12, 8), "float32")
    f(mr.nd.array(wn), un)
    np.testing.assert_allclose(un.numpy(), winograd_weight_transform(wn, 2), rtol=1e-6,
                               atol=1e-6)
