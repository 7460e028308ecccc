"""relay.build on the model zoo: the graph executor's results match each model's numpy
reference on llvm and c; the exported single file runs in a process that has only the runtime,
and, linked statically (`--system-lib`), from a C program with no dlopen."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import microruntime as mr
from compiler import relay
from compiler.ir.errors import UnsupportedOpError
from compiler.relax import BlockBuilder, Var
from compiler.relax import op as R
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.testing import models
from microruntime import graph_executor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", models.ALL, ids=lambda f: f.__name__)
def test_models_match_numpy(make, target):
    m = make()
    lib = relay.build(m.mod, target=target, params=m.params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    for seed in (0, 1):
        inputs = m.inputs(seed=seed)
        gm.run(**inputs)
        np.testing.assert_allclose(gm.get_output(0).numpy(), m.reference(inputs), **TOL)


def test_factory_api_and_fusion_figures():
    m = models.conv_bn_relu_pool_dense()
    lib = relay.build(m.mod, target="llvm", params=m.params)
    graph = json.loads(lib.get_graph_json())
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]
    # the convolution region runs in NCHW[x]c: one layout transform in, one out (with the
    # flatten), no reorder between the conv and the pool; the dense layer's constant weight is
    # transposed at compile time: a matmul by W.T
    assert kernels == ["fused_layout_transform", "fused_nn_conv2d_add_nn_relu",
                       "fused_nn_max_pool2d", "fused_layout_transform_reshape",
                       "fused_matmul_add", "fused_nn_softmax"]
    # weights were bound, folded (batch norm into the conv) and renamed p0, p1, ...
    assert sorted(lib.get_params()) == [f"p{i}" for i in range(len(lib.get_params()))]
    assert len(lib.get_params()) == 4
    for k in kernels:
        assert lib.get_lib().implements_function(k)


def test_exported_file_runs_without_the_compiler(tmp_path):
    m = models.residual_block()
    path = str(tmp_path / "model.so")
    relay.build(m.mod, target="llvm", params=m.params).export_library(path)
    inputs = m.inputs(seed=4)
    np.savez(tmp_path / "in.npz", **inputs)
    script = f"""
import sys, numpy as np
import microruntime as mr
from microruntime import graph_executor
gm = graph_executor.GraphModule(mr.load_module({path!r})["default"](mr.cpu()))
inputs = dict(np.load({str(tmp_path / 'in.npz')!r}))
gm.run(**inputs)
np.save({str(tmp_path / 'out.npy')!r}, gm.get_output(0).numpy())
assert not any(k == "compiler" or k.startswith("compiler.") for k in sys.modules)
"""
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=ROOT))
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), m.reference(inputs), **TOL)


def test_static_model_runs_from_c_without_dlopen(tmp_path):
    subprocess.run(["make", "-s", "-C", ROOT, "build/libmicroruntime_nodl.a"], check=True)
    m = models.mlp()
    archive = str(tmp_path / "model.a")
    relay.build(m.mod, target="llvm --system-lib", params=m.params).export_library(archive)
    app = str(tmp_path / "app")
    subprocess.run(["cc", "-std=c99", "-O2", "-DGRAPH_DEPLOY_SYSTEM_LIB",
                    "-I" + os.path.join(ROOT, "microruntime", "include"),
                    os.path.join(ROOT, "apps", "graph_deploy", "main.c"), archive,
                    os.path.join(ROOT, "build", "libmicroruntime_nodl.a"), "-lpthread", "-lm",
                    "-o", app], check=True)
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    assert "dlopen" not in undefined
    inputs = m.inputs(seed=7)
    (name, x), = inputs.items()
    x.tofile(tmp_path / "x.bin")
    out = subprocess.run([app, "-", f"{name}={tmp_path / 'x.bin'}"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    got = np.array([float(v) for v in out.split()], "float32").reshape(m.reference(inputs).shape)
    np.testing.assert_allclose(got, m.reference(inputs), **TOL)


def test_bad_inputs_are_named():
    m = models.mlp()
    gm = graph_executor.GraphModule(relay.build(m.mod, target="llvm",
                                                params=m.params)["default"](mr.cpu()))
    (name, x), = m.inputs().items()
    with pytest.raises(RuntimeError, match="nope"):
        gm.set_input("nope", x)
    with pytest.raises(RuntimeError, match=r"expects \[4, 32\] float32, got \[1, 2\] float32"):
        gm.set_input(name, np.zeros((1, 2), "float32"))
    with pytest.raises(RuntimeError, match=r"got \[4, 32\] float64"):
        gm.set_input(name, x.astype("float64"))


def test_unknown_operator_fails_before_compiling():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(R.nn.gelu_tanh(x))
        bb.emit_func_output(out)
    with pytest.raises(UnsupportedOpError, match="gelu_tanh"):
        relay.build(bb.get(), target="llvm")
