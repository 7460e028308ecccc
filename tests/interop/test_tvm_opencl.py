"""An OpenCL library built by Apache TVM 0.27 (a te vector add, target "opencl" with an llvm
host, export_library in a TVM subprocess) loads in the microruntime and runs on
microruntime.opencl(): TVM's host code fills its context slots from our loader, calls our
__tvm_set_device, then the kernel of the "opencl" module our loader rebuilt from the blob."""
import subprocess

import numpy as np
import pytest
from tvm_subprocess import TVM_PYTHON, requires_tvm

import microruntime as mr
from microruntime import nd

pytestmark = requires_tvm

BUILD = r"""
import sys
import tvm
from tvm import te

n = te.var("n")
A = te.placeholder((n,), "float32", name="A")
B = te.placeholder((n,), "float32", name="B")
C = te.compute((n,), lambda i: A[i] * 2.0 + B[i], name="C")
func = te.create_prim_func([A, B, C]).with_attr("global_symbol", "vadd")
sch = tvm.s_tir.Schedule(func)
(i,) = sch.get_loops(sch.get_sblock("C"))
bx, tx = sch.split(i, factors=[None, 64])
sch.bind(bx, "blockIdx.x")
sch.bind(tx, "threadIdx.x")
lib = tvm.compile(sch.mod, target=tvm.target.Target("opencl", host="llvm"))
lib.export_library(sys.argv[1])
"""


@pytest.fixture(scope="module")
def tvm_opencl_lib(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("tvm_opencl") / "vadd_opencl.so")
    proc = subprocess.run([TVM_PYTHON, "-c", BUILD, out], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_tvm_opencl_library_loads(tvm_opencl_lib):
    lib = mr.load_module(tvm_opencl_lib)
    (dev_mod,) = lib.imported_modules
    assert dev_mod.type_key == "opencl"
    assert "__kernel void vadd_kernel" in dev_mod.get_source()


@pytest.mark.skipif(not mr.enabled("opencl"), reason="no OpenCL driver with a device")
@pytest.mark.parametrize("n", [1, 64, 1000])
def test_tvm_opencl_library_runs(tvm_opencl_lib, n):
    lib = mr.load_module(tvm_opencl_lib)
    dev = mr.opencl(0)
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    c = nd.empty((n,), "float32", dev)
    lib["vadd"](nd.array(a, dev), nd.array(b, dev), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + b, rtol=1e-6)


@pytest.mark.skipif(not mr.enabled("opencl"), reason="no OpenCL driver with a device")
def test_tvm_opencl_library_checks_devices(tvm_opencl_lib):
    lib = mr.load_module(tvm_opencl_lib)
    host = nd.array(np.zeros(8, "float32"))
    with pytest.raises(ValueError, match="device_type"):
        lib["vadd"](host, host, host)
