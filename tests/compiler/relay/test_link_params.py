"""Link-params builds of the graph executor (`Executor("graph", {"link-params": True})`): the
weights are constant data of the kernel library, looked up by storage id and read in place.
The outputs equal a normal build's; the factory payload holds no copy of them; the manifest
lists them as linked and leaves their slots out of arena_bytes; setting one is refused."""
import struct

import numpy as np
import pytest

import microruntime as mr
from compiler import relax, relay
from compiler.codegen.linked_params import c_source, linked_param
from compiler.ir.errors import TargetError
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.backend.graph.linked_params import wants_link_params
from compiler.relay.backend import Executor
from compiler.target import Target
from microruntime import graph_executor

LINKED = Executor("graph", {"link-params": True})


def _model(seed=0):
    """conv3x3 (Winograd: a kernel on the weight alone, run once at load) + relu + dense."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((16, 16, 3, 3)) / 12).astype("float32")
    d = (rng.standard_normal((10, 16 * 8 * 8)) / 32).astype("float32")
    b = rng.standard_normal((10,)).astype("float32")
    x = relax.Var("x", R.Tensor((1, 16, 8, 8), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(op.nn.relu(op.nn.conv2d(x, relax.const(w), padding=1)))
        y = bb.emit(op.reshape(y, (1, 16 * 8 * 8)))
        y = bb.emit(op.add(op.matmul(y, op.permute_dims(relax.const(d))), relax.const(b)))
        bb.emit_func_output(y)
    return bb.get()


def _run(factory, x):
    g = graph_executor.GraphModule(factory["default"](mr.cpu()))
    g.set_input("x", x)
    g.run()
    return g, g.get_output(0).numpy()


def _payload_param_count(payload: bytes) -> int:
    (n,) = struct.unpack_from("<Q", payload, 0)
    (count,) = struct.unpack_from("<Q", payload, 8 + n)
    return count


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_link_params_build_matches_a_normal_build(target):
    mod = _model()
    x = np.random.default_rng(1).standard_normal((1, 16, 8, 8)).astype("float32")
    normal = relay.build(mod, target)
    linked = relay.build(mod, target, executor=LINKED)
    _, want = _run(normal, x)
    g, got = _run(linked, x)
    np.testing.assert_array_equal(got, want)
    g.run()   # the ops of the weights alone ran once; a second run gives the same
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
    # the payload carries no copy of the weights; the manifest names them as linked
    assert _payload_param_count(linked.get_payload()) == 0
    assert len(linked.get_payload()) < len(normal.get_payload()) - 16 * 16 * 9 * 4
    assert linked.manifest["params"] == []
    assert sorted(linked.manifest["linked_params"]) == sorted(normal.get_params())
    assert linked.manifest["arena_bytes"] < normal.manifest["arena_bytes"]
    assert sorted(linked.get_params()) == sorted(normal.get_params())


def test_exported_link_params_library_loads_and_runs(tmp_path):
    mod = _model()
    x = np.random.default_rng(2).standard_normal((1, 16, 8, 8)).astype("float32")
    _, want = _run(relay.build(mod, "llvm"), x)
    path = str(tmp_path / "model.so")
    relay.build(mod, "llvm", executor=LINKED).export_library(path)
    g = graph_executor.GraphModule(mr.load_module(path)["default"](mr.cpu()))
    g.set_input("x", x)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)


def test_setting_a_linked_param_is_refused():
    factory = relay.build(_model(), "llvm", executor=LINKED)
    g, _ = _run(factory, np.zeros((1, 16, 8, 8), "float32"))
    name, value = next(iter(factory.get_params().items()))
    with pytest.raises(Exception, match=f"set_input: parameter '{name}' is linked"):
        g.set_input(name, value.numpy())
    with pytest.raises(Exception, match="is linked into the kernel library"):
        g.load_params(mr.save_param_dict({name: value.numpy()}))


def test_manifest_linked_params_checked():
    factory = relay.build(_model(), "llvm", executor=LINKED)
    bad = dict(factory.manifest, linked_params=["nope"])
    with pytest.raises(Exception, match="linked param 'nope' is not an input of the graph"):
        relay.GraphExecutorFactoryModule(factory.graph_json, factory.lib, {}, manifest=bad)


def test_library_without_lookup_is_an_error():
    normal = relay.build(_model(), "llvm")
    manifest = relay.make_manifest(normal.graph_json, {}, 0, list(normal.get_params()))
    with pytest.raises(Exception, match="no kiln_linked_param function"):
        relay.GraphExecutorFactoryModule(normal.graph_json, normal.lib, {}, manifest=manifest)


def test_defaults():
    assert not wants_link_params(None, Target("llvm"))
    assert not wants_link_params(None, Target("llvm --system-lib"))
    assert wants_link_params(None, Target(
        "c -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4 --system-lib"))
    assert not wants_link_params(False, Target(
        "c -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4 --system-lib"))
    assert wants_link_params(True, Target("llvm"))
    with pytest.raises(TargetError, match="must be a bool"):
        Executor("graph", {"link-params": "yes"})


def test_c_source_is_aligned_const_data_and_a_lookup():
    src = c_source([linked_param(3, np.arange(4, dtype="float32"))], prefix="")
    assert "static const unsigned char kiln_param_0[16] KILN_ALIGNED" in src
    assert "__tvm_ffi_kiln_linked_param" in src
    assert "TVMFFIEnvModRegisterSystemLibSymbol" in src   # a system library registers it
    assert "TVMFFIEnvModRegisterSystemLib" not in c_source([], prefix=None)
