"""Relax VM models that Apache TVM 0.27 builds (relax.build + export_library, llvm) run on the
microruntime's VM and match TVM's own VM: an MLP, a CNN with BatchNorm from ONNX, the same
with a symbolic batch (two batch sizes), and an ONNX If (both branches). TVM runs in a
subprocess (tvm_vm_models.py)."""
import os
import subprocess

import numpy as np
import pytest
from tvm_subprocess import TVM_PYTHON, requires_tvm

import microruntime as mr
from microruntime.relax_vm import VirtualMachine

HERE = os.path.dirname(os.path.abspath(__file__))
pytestmark = requires_tvm


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("tvm_vm_models")
    proc = subprocess.run([TVM_PYTHON, os.path.join(HERE, "tvm_vm_models.py"), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


@pytest.mark.parametrize("name", ["mlp", "cnn_bn", "cnn_dyn", "if"])
@pytest.mark.parametrize("memory_cfg", ["naive", "pooled"])
def test_model_matches_tvm(built, name, memory_cfg):
    ex = mr.load_module(os.path.join(built, name + ".so"))
    assert ex.type_key == "relax.VMExecutable"
    vm = VirtualMachine(ex, mr.cpu(), memory_cfg=memory_cfg)
    data = np.load(os.path.join(built, name + ".npz"))
    for k in range(int(data["n"])):
        inputs = [data[f"in{k}_{j}"] for j in range(8) if f"in{k}_{j}" in data]
        out = vm["main"](*[mr.nd.array(i) for i in inputs])
        np.testing.assert_allclose(out.numpy(), data[f"out{k}"], rtol=1e-5, atol=1e-5)


def test_wrong_input_names_parameter(built):
    vm = VirtualMachine(mr.load_module(os.path.join(built, "cnn_bn.so")), mr.cpu())
    with pytest.raises(ValueError, match="ndim"):
        vm["main"](mr.nd.array(np.zeros((2, 3, 8), "float32")))
    with pytest.raises(ValueError, match="dtype"):
        vm["main"](mr.nd.array(np.zeros((2, 3, 8, 8), "float64")))
