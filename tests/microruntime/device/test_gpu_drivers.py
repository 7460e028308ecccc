"""GPU drivers are found at run time: without one, loading device code still works, and the
first use of the device fails with a clear error naming the library looked for. CUDA kernels
run only where libcuda.so.1 and a GPU are present (skipped here otherwise)."""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from devmod_bytes import HANDLE, INT32, payload

import microruntime as mr
from microruntime import nd


def nvcc_env():
    """This environment without LD_PRELOAD (nvcc crashes with a sanitizer runtime preloaded)."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _libcuda_loads():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


HAS_LIBCUDA = _libcuda_loads()
needs_cuda_gpu = pytest.mark.skipif(not mr.enabled("cuda"),
                                    reason="no CUDA driver with a GPU (libcuda.so.1 is absent "
                                           "or lists no device)")

CUDA_VADD = r"""
extern "C" __global__ void vadd(const float* A, const float* B, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}
"""


@pytest.fixture(scope="module")
def vadd_ptx(tmp_path_factory):
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc")
                                    else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed: no PTX to load")
    out = tmp_path_factory.mktemp("ptx")
    src = out / "vadd.cu"
    src.write_text(CUDA_VADD)
    subprocess.run([nvcc, "-ptx", "-arch=compute_75", "-o", str(out / "vadd.ptx"), str(src)],
                   check=True, capture_output=True, env=nvcc_env())
    return (out / "vadd.ptx").read_text()


def cuda_module(ptx):
    data = payload("ptx", [("vadd", [HANDLE, HANDLE, HANDLE, INT32],
                            ["blockIdx.x", "threadIdx.x"])], ptx)
    return mr.get_global_func("ffi.Module.load_from_bytes.cuda")(data)


def test_cuda_module_loads_without_a_driver(vadd_ptx):
    mod = cuda_module(vadd_ptx)
    assert mod.type_key == "cuda" and ".entry vadd" in mod.get_source()
    assert mod.implements_function("vadd")


@pytest.mark.skipif(HAS_LIBCUDA, reason="libcuda.so.1 is present: the missing-driver path "
                                        "cannot be seen")
def test_cuda_without_driver(vadd_ptx):
    assert mr.enabled("cuda") is False
    dev = mr.cuda(0)
    assert dev.exist is False and dev.device_name is None and dev.compute_version is None
    with pytest.raises(RuntimeError, match="cuda: libcuda.so.1 not found: "):
        nd.empty((4,), "float32", dev)
    # The kernel's arguments are checked first, then the driver is needed.
    fake = nd.array(np.zeros(4, "float32"))
    with pytest.raises(RuntimeError, match="cuda: libcuda.so.1 not found: "):
        cuda_module(vadd_ptx)["vadd"](fake, fake, fake, 4, 1, 4)


@needs_cuda_gpu
@pytest.mark.parametrize("n", [1, 1000])
def test_cuda_vadd_runs(vadd_ptx, n):
    dev = mr.cuda(0)
    assert dev.exist and isinstance(dev.device_name, str) and dev.warp_size == 32
    assert len(dev.max_thread_dimensions) == 3
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    A, C = nd.array(a, dev), nd.empty((n,), "float32", dev)
    cuda_module(vadd_ptx)["vadd"](A, A, C, n, (n + 127) // 128, 128)
    np.testing.assert_allclose(C.numpy(), 2 * a, rtol=1e-6)
    np.testing.assert_array_equal(A.copyto(dev).numpy(), a)


MISSING_DRIVER = r"""
import numpy as np
import microruntime as mr
from microruntime import nd
print("enabled", mr.enabled("opencl"), mr.opencl(0).exist, mr.opencl(0).device_name)
for attempt in range(2):
    try:
        nd.array(np.zeros(3, "float32"), mr.opencl(0))
    except RuntimeError as err:
        print("array", err)
mod = mr.get_global_func("ffi.Module.load_from_bytes.opencl")(bytes.fromhex(PAYLOAD))
x = nd.array(np.zeros(3, "float32"))
try:
    mod["k"](x, 3, 1, 3)
except RuntimeError as err:
    print("kernel", err)
"""


def test_missing_opencl_driver():
    """MR_OPENCL_LIBRARY names the driver library; one that does not exist stands for a
    machine without OpenCL (in a subprocess: the driver is looked for once per process)."""
    data = payload("cl", [("k", [HANDLE, INT32], ["blockIdx.x", "threadIdx.x"])], "__kernel")
    env = dict(os.environ, MR_OPENCL_LIBRARY="libOpenCL_absent.so.1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", f"PAYLOAD = {data.hex()!r}\n" + MISSING_DRIVER],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "enabled False False None"
    expected = "opencl: libOpenCL_absent.so.1 not found: libOpenCL_absent.so.1: cannot open"
    assert lines[1].startswith("array " + expected) and lines[2].startswith("array " + expected)
    assert lines[3].startswith("kernel " + expected)
