"""Whole models on GPUs through the graph executor: relay.build(..., target=<api>,
target_host="llvm") of a small CNN runs on OpenCL (PoCL here) and on Vulkan (lavapipe here) and
matches the CPU (llvm) build (rtol 1e-4, atol 1e-5); exported as one .so it loads and runs in a
fresh process that imports only microruntime; a CUDA build of the same CNN compiles to PTX
(running it needs a GPU). The graph of a GPU build places kernels that cannot run on GPU threads
(a 0-d result) on the host, with device_index and __copy nodes."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import microruntime
from compiler import relay
from compiler.ir.errors import TargetError
from compiler.relax import op
from compiler.relax.block_builder import BlockBuilder
from compiler.relax.expr import Var, const
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.testing import models
from microruntime import graph_executor

RTOL, ATOL = 1e-4, 1e-5
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _gpu_build(model, target="opencl", **kw):
    try:
        return relay.build(model.mod, target=target, target_host="llvm", params=model.params,
                           **kw)
    except TargetError as err:
        if "not implemented" in str(err):
            pytest.skip(f"{target} code generation is not available: {err}")
        raise


def _need_opencl():
    if not microruntime.enabled("opencl"):
        pytest.skip("no OpenCL device (microruntime.enabled('opencl') is False)")


def _run(lib, dev, inputs):
    g = graph_executor.GraphModule(lib["default"](dev))
    for k, v in inputs.items():
        g.set_input(k, v)
    g.run()
    return g.get_output(0).numpy()


@pytest.fixture(scope="module")
def cnn():
    return models.conv_bn_relu_pool_dense(batch=1, channels=3, size=16, filters=8)


def test_cnn_on_gpu_matches_cpu(cnn, gpu_api):
    lib = _gpu_build(cnn, target=gpu_api.name)
    inputs = cnn.inputs()
    got = _run(lib, gpu_api.device(), inputs)
    cpu = relay.build(cnn.mod, target="llvm", params=cnn.params)
    want = _run(cpu, microruntime.cpu(0), inputs)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got, cnn.reference(inputs), rtol=1e-3, atol=1e-4)


def test_cnn_on_opencl_target_dict_form(cnn):
    _need_opencl()
    lib = relay.build(cnn.mod, target={"opencl": "opencl", "llvm": "llvm"},
                      params=cnn.params) if _codegen_ready() else pytest.skip("no codegen")
    inputs = cnn.inputs(1)
    np.testing.assert_allclose(_run(lib, microruntime.opencl(0), inputs),
                               cnn.reference(inputs), rtol=1e-3, atol=1e-4)


def _codegen_ready() -> bool:
    from compiler import build, te

    a = te.placeholder((4,), name="a")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="b")
    s = te.create_schedule(b.op)
    s[b].bind(b.op.axis[0], te.thread_axis("threadIdx.x"))
    try:
        build(s, [a, b], target="opencl", target_host="llvm")
    except TargetError:
        return False
    return True


_LOADER = """
import sys, numpy as np
import microruntime
from microruntime import graph_executor
assert not any(m == "compiler" or m.startswith("compiler.") for m in sys.modules)
lib = microruntime.load_module(sys.argv[1])
g = graph_executor.GraphModule(lib["default"](getattr(microruntime, sys.argv[4])(0)))
g.set_input("x", np.load(sys.argv[2]))
g.run()
np.save(sys.argv[3], g.get_output(0).numpy())
assert not any(m == "compiler" or m.startswith("compiler.") for m in sys.modules)
"""


def test_cnn_exported_so_runs_in_fresh_process(cnn, gpu_api, tmp_path):
    lib = _gpu_build(cnn, target=gpu_api.name)
    so = str(tmp_path / f"cnn_{gpu_api.name}.so")
    lib.export_library(so)
    inputs = cnn.inputs(2)
    np.save(tmp_path / "x.npy", inputs["x"])
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", _LOADER, so, str(tmp_path / "x.npy"),
                    str(tmp_path / "y.npy"), gpu_api.name], check=True, env=env, cwd=str(tmp_path),
                   timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), cnn.reference(inputs),
                               rtol=1e-3, atol=1e-4)


def test_cnn_cuda_build_compiles_to_ptx(cnn):
    lib = _gpu_build(cnn, target="cuda")
    sources = [m.get_source() for m in lib.get_lib().imported_modules]
    assert any(".entry" in src or "__global__" in src for src in sources)
    if not microruntime.enabled("cuda"):
        pytest.skip("no CUDA GPU here: the PTX compiled, running it needs one")
    inputs = cnn.inputs()
    np.testing.assert_allclose(_run(lib, microruntime.cuda(0), inputs),
                               cnn.reference(inputs), rtol=1e-3, atol=1e-4)


def _scalar_model():
    """softmax(x) * 2 on the GPU, then its sum: a 0-d result no GPU thread computes."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4, 8), "float32"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        y = bb.emit(op.multiply(op.nn.softmax(x), const(np.float32(2))))
        out = bb.emit_output(op.sum(y, axis=None, keepdims=False))
    bb.emit_func_output(out, [x])
    return bb.get()


def test_heterogeneous_plan_keeps_scalar_kernel_on_host():
    mod, graph = relay.plan(_scalar_model(), target="opencl")
    g = json.loads(graph.graph_json)
    dev = g["attrs"]["device_index"][1]
    row = g["node_row_ptr"]
    by_name = {n["name"]: i for i, n in enumerate(g["nodes"])}
    ops = [n for n in g["nodes"] if n["op"] == "tvm_op"]
    funcs = [n["attrs"]["func_name"] for n in ops]
    assert "__copy" in funcs, funcs
    assert set(dev) == {1, 4}
    assert dev[row[by_name["x"]]] == 4            # the input goes where its reader runs
    head = g["heads"][0][0]
    assert dev[row[head]] == 1                     # the scalar sum runs on the host
    copy = next(i for i, n in enumerate(g["nodes"])
                if n.get("attrs", {}).get("func_name") == "__copy")
    assert dev[row[copy]] == 1 and dev[row[g["nodes"][copy]["inputs"][0][0]]] == 4
    sids = g["attrs"]["storage_id"][1]
    for sid in set(sids):                          # no slot holds entries of two devices
        assert len({d for d, s in zip(dev, sids) if s == sid}) == 1


def test_heterogeneous_model_runs_on_gpu(gpu_api):
    lib = relay.build(_scalar_model(), target=gpu_api.name, target_host="llvm")
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    got = _run(lib, gpu_api.device(), {"x": x})
    np.testing.assert_allclose(got, 2.0 * x.shape[0], rtol=RTOL, atol=1e-4)
