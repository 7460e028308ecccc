"""A whole GPU library: a host .so (fixtures/opencl_host.c, written like TVM's host code) whose
`__tvm_ffi__library_bin` imports an OpenCL device module. load_module rebuilds the import tree;
the host function calls __tvm_set_device and the kernel by name."""
import os
import subprocess

import numpy as np
import pytest
from devmod_bytes import HANDLE, INT32, library_blob, payload

import microruntime as mr
from microruntime import nd

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
INCLUDE = os.path.join(ROOT, "microruntime", "include")

VADD = """
__kernel void vadd(__global const float* A, __global const float* B, __global float* C, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) C[i] = A[i] + B[i];
}
"""


def build_host_library(out_dir, device_payload):
    """Compiles the host fixture with the blob importing `device_payload` (kind opencl)."""
    blob = library_blob("opencl", device_payload)
    with open(os.path.join(out_dir, "device_blob.inc"), "w") as f:
        f.write(",".join(str(b) for b in blob))
    so = os.path.join(out_dir, "opencl_host.so")
    subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-shared", "-fPIC", "-Wall",
                    "-Werror", "-I" + INCLUDE, "-I" + FIXTURES, "-I" + out_dir, "-o", so,
                    os.path.join(FIXTURES, "opencl_host.c")], check=True)
    return so


@pytest.fixture(scope="module")
def host_library(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("opencl_host"))
    return build_host_library(out, payload("cl", [("vadd", [HANDLE, HANDLE, HANDLE, INT32],
                                                     ["blockIdx.x", "threadIdx.x"])], VADD))


def test_library_imports_the_device_module(host_library):
    lib = mr.load_module(host_library)
    (dev_mod,) = lib.imported_modules
    assert dev_mod.type_key == "opencl" and dev_mod.get_source() == VADD


@pytest.mark.skipif(not mr.enabled("opencl"), reason="no OpenCL driver with a device")
@pytest.mark.parametrize("n", [1, 100, 4097])
def test_library_runs_on_opencl(host_library, n):
    lib = mr.load_module(host_library)
    dev = mr.opencl(0)
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    c = nd.empty((n,), "float32", dev)
    lib["vadd_host"](nd.array(a, dev), nd.array(b, dev), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_host_errors_pass_through(host_library):
    lib = mr.load_module(host_library)
    x = nd.array(np.zeros(4, "float32"))
    with pytest.raises(ValueError, match="must be on an OpenCL device"):
        lib["vadd_host"](x, x, x)


def test_truncated_device_payload_fails_the_library_load(tmp_path):
    good = payload("cl", [("vadd", [HANDLE, HANDLE, HANDLE, INT32],
                           ["blockIdx.x", "threadIdx.x"])], VADD)
    so = build_host_library(str(tmp_path), good[:-10])
    with pytest.raises(RuntimeError, match=r"cannot load imported module 1 of kind 'opencl': "
                                           r"opencl module: truncated reading code"):
        mr.load_module(so)
