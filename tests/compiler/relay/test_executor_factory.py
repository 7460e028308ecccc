"""GraphExecutorFactoryModule: in-process execution, the payload and manifest, export as one
library that a fresh process (microruntime only, no compiler) loads, and the manifest checks."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import microruntime as mr
from compiler.relay import GraphExecutorFactoryModule, make_manifest, write_payload
from microruntime import graph_executor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "microruntime"))
import graph_model as gm  # noqa: E402

TOL = dict(rtol=1e-5, atol=1e-5)


def _written(manifest):
    """A manifest as written into the payload, without the checksums written with it."""
    manifest = dict(manifest)
    sums = manifest.pop("crc32c")
    assert set(sums) == {"graph_json", "params"}
    return manifest


@pytest.fixture(scope="module")
def libs():
    return {}


@pytest.fixture
def factory(target, libs):
    if target not in libs:
        libs[target] = gm.kernels(target)
    _, _, w = gm.data()
    return GraphExecutorFactoryModule(gm.graph_json(), libs[target], {"w": w})


def test_in_process(factory):
    x, y, w = gm.data()
    assert factory.manifest == gm.manifest()
    assert factory.get_graph_json() == factory.get_executor_config() == gm.graph_json()
    assert list(factory.get_params()) == ["w"] and factory.get_lib() is not None
    gmod = graph_executor.GraphModule(factory["default"](mr.cpu()))
    gmod.run(x=x, y=y)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), gm.reference(x, y, w), **TOL)
    gmod2 = graph_executor.GraphModule(factory(mr.cpu()))
    assert gmod2.get_input_info()[0] == {"x": (2, 8), "y": (2, 8)}
    names, tensors = factory.module["get_graph_params"]()
    assert list(names) == ["w"]
    np.testing.assert_array_equal(tensors[0].numpy(), w)
    assert _written(json.loads(factory.module["get_manifest"]())) == gm.manifest()


FRESH = r"""
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("compiler", "llvmlite", "jinja2"):
            raise ImportError("blocked: " + name)

sys.meta_path.insert(0, Block())
import numpy as np
import microruntime as mr
from microruntime import graph_executor
lib = mr.load_module(sys.argv[1])
assert lib.type_key == "GraphExecutorFactory", lib.type_key
gmod = graph_executor.GraphModule(lib["default"](mr.cpu()))
gmod.set_input("x", np.load(sys.argv[2]))
gmod.set_input("y", np.load(sys.argv[3]))
gmod.run()
np.save(sys.argv[4], gmod.get_output(0).numpy())
"""


def test_export_and_load_in_a_fresh_process(factory, tmp_path):
    x, y, _ = gm.data(3)
    w = factory.params["w"].numpy()
    path = str(tmp_path / "model.so")
    factory.export_library(path)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out.npy"
    root = os.path.dirname(os.path.dirname(os.path.abspath(mr.__file__)))
    subprocess.run([sys.executable, "-c", FRESH, path, str(tmp_path / "x.npy"),
                    str(tmp_path / "y.npy"), str(out)], check=True,
                   env=dict(os.environ, PYTHONPATH=root))
    np.testing.assert_allclose(np.load(out), gm.reference(x, y, w), **TOL)
    # The manifest, read from the file (no loading), and by the command line.
    assert _written(graph_executor.read_manifest(path)) == gm.manifest()
    text = subprocess.run([sys.executable, "-m", "microruntime", "manifest", path],
                          stdout=subprocess.PIPE, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=root)).stdout
    assert "input  x: float32[2, 8]" in text and "storage: 5 slots, 384 bytes" in text
    assert "kernels: 4 (add, relu_nk, dense, relu_nm)" in text


def test_payload_layout(factory):
    payload = factory.get_payload()
    n = int.from_bytes(payload[:8], "little")
    assert payload[8:8 + n].decode() == gm.graph_json()
    assert int.from_bytes(payload[8 + n:16 + n], "little") == 1     # count
    assert _written(json.loads(payload[payload.rindex(b'{"format"'):])) == gm.manifest()
    # Without a manifest, TVM's layout exactly: it ends with the module name.
    plain = write_payload(gm.graph_json(), factory.params, "default", None)
    assert plain.endswith(b"\x07" + b"\x00" * 7 + b"default")
    mod = mr.get_global_func("ffi.Module.load_from_bytes.GraphExecutorFactory")(plain)
    assert mod.type_key == "GraphExecutorFactory"


def _factory_with(lib, manifest=None, graph=None, params=None):
    _, _, w = gm.data()
    params = {"w": w} if params is None else params
    return GraphExecutorFactoryModule(json.dumps(graph or gm.graph()), lib, params, manifest)


@pytest.mark.parametrize("change, phrase", [
    (lambda m: m.update(storage_bytes=[64, 64, 128, 64, 32]),
     "manifest: storage slot 4 is 32 bytes in the manifest but 64 in the graph"),
    (lambda m: m.update(total_bytes=100), "'total_bytes' is not 384"),
    (lambda m: m["inputs"][1].update(shape=[2, 9]),
     "manifest: input 'y' is [2, 9] float32 in the manifest but [2, 8] float32 in the graph"),
    (lambda m: m["inputs"][0].update(name="q"), "input 0 is not named 'x'"),
    (lambda m: m["outputs"][0].update(dtype="int8"), "output 0 is [2, 4] int8 in the manifest"),
    (lambda m: m.update(kernels=["add", "dense"]), "the graph calls 'relu_nk', which 'kernels'"),
    (lambda m: m.update(params=["v"]), "param 'v' is not among the model's params"),
    (lambda m: m.update(version=2), "manifest: version 2, expected 1"),
])
def test_manifest_mismatch(factory, change, phrase):
    manifest = gm.manifest()
    change(manifest)
    with pytest.raises(graph_executor.GraphExecutorError) as err:
        _factory_with(factory.lib, manifest)
    assert phrase in str(err.value)


def test_kernel_missing_from_library(factory):
    g = gm.graph()
    g["nodes"][4]["attrs"]["func_name"] = "relu_missing"
    with pytest.raises(graph_executor.GraphExecutorError,
                       match="node 4 \\('relu0'\\) calls 'relu_missing', which the kernel "
                             "library does not define"):
        _factory_with(factory.lib, graph=g)


def test_param_checks(factory):
    with pytest.raises(graph_executor.GraphExecutorError,
                       match="parameter 'w' expects \\[4, 8\\] float32, got \\[8, 4\\]"):
        _factory_with(factory.lib, params={"w": np.zeros((8, 4), "float32")})
    with pytest.raises(graph_executor.GraphExecutorError,
                       match="parameter 'v' is not an input of the graph"):
        _factory_with(factory.lib, params={"v": np.zeros(3, "float32")})


def test_corrupt_payload():
    load = mr.get_global_func("ffi.Module.load_from_bytes.GraphExecutorFactory")
    payload = write_payload(gm.graph_json(), {}, "default", gm.manifest(params=()))
    with pytest.raises(ValueError, match="GraphExecutorFactory: truncated"):
        load(payload[:-3])
    with pytest.raises(graph_executor.GraphExecutorError, match="graph JSON"):
        load(write_payload("{nodes", {}, "default"))


def test_make_manifest_counts_shared_slots():
    m = make_manifest(gm.graph_json(), {"w": None})
    assert m["storage_bytes"] == gm.STORAGE_BYTES and m["total_bytes"] == 384
    assert [i["name"] for i in m["inputs"]] == ["x", "y"]
