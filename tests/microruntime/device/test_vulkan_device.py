"""The Vulkan device (lavapipe here): properties, arrays on it, copies; without a loader,
`enabled("vulkan")` is False and the first use fails naming the library looked for; without
a compute-capable device (no ICD), the error says so."""
import os
import subprocess
import sys

import numpy as np
import pytest
from devmod_bytes import HANDLE
from test_vulkan_payload import load, spirv, vulkan_payload

import microruntime as mr
from microruntime import nd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
needs_vulkan = pytest.mark.skipif(not mr.enabled("vulkan"),
                                  reason="no Vulkan loader with a compute device")


@needs_vulkan
def test_properties():
    dev = mr.vulkan(0)
    assert dev.exist and dev.device_type == 7 and str(dev) == "vulkan(0)"
    assert dev.max_threads_per_block >= 128
    assert dev.max_shared_memory_per_block >= 16384
    assert dev.warp_size == 1
    assert dev.compute_version.startswith("1.")
    assert dev.device_name
    assert len(dev.max_thread_dimensions) == 3
    assert not mr.vulkan(15).exist


@needs_vulkan
@pytest.mark.parametrize("dtype", ["float32", "int64", "float64", "uint8"])
def test_array_round_trip_and_copies(dtype):
    x = (np.arange(37) * 3).astype(dtype)
    a = nd.array(x, mr.vulkan(0))
    assert a.device == mr.vulkan(0)
    np.testing.assert_array_equal(a.numpy(), x)
    b = nd.empty(x.shape, dtype, mr.vulkan(0))
    a.copyto(b)
    np.testing.assert_array_equal(b.numpy(), x)
    b.copyfrom(x[::-1].copy())
    np.testing.assert_array_equal(b.numpy(), x[::-1])
    np.testing.assert_array_equal(a.numpy(), x)  # a distinct buffer


@needs_vulkan
def test_kernel_with_more_buffers_than_the_device_binds():
    if not mr.vulkan(0).device_name.startswith("llvmpipe"):
        pytest.skip("the limit of 32 storage buffers per shader is lavapipe's")
    mod = load(vulkan_payload([("k", [HANDLE] * 33, ["threadIdx.x"])], [("k", spirv())]))
    arrays = [nd.array(np.zeros(4, "float32"), mr.vulkan(0)) for _ in range(33)]
    with pytest.raises(RuntimeError, match="kernel 'k' takes 33 array arguments, more than "
                       "the 32 storage buffers .* max_function_args"):
        mod["k"](*arrays, 1)


@needs_vulkan
def test_empty_array():
    a = nd.array(np.zeros((0, 4), "float32"), mr.vulkan(0))
    assert a.numpy().shape == (0, 4)


def test_absent_device_id_errors():
    if mr.enabled("vulkan"):
        with pytest.raises(RuntimeError, match="vulkan: device 15 does not exist"):
            nd.array(np.zeros(3, "float32"), mr.vulkan(15))


SCRIPT = r"""
import numpy as np
import microruntime as mr
from microruntime import nd
print("enabled", mr.enabled("vulkan"), mr.vulkan(0).exist, mr.vulkan(0).device_name)
try:
    nd.array(np.zeros(3, "float32"), mr.vulkan(0))
except RuntimeError as err:
    print("array", err)
"""


def _run(env_extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_missing_vulkan_loader():
    """MR_VULKAN_LIBRARY names the loader; one that does not exist stands for a machine
    without Vulkan (in a subprocess: the loader is looked for once per process)."""
    lines = _run({"MR_VULKAN_LIBRARY": "libvulkan_absent.so.1"})
    assert lines[0] == "enabled False False None"
    assert lines[1].startswith("array vulkan: libvulkan_absent.so.1 not found: "
                               "libvulkan_absent.so.1: cannot open")


def test_no_compute_device():
    """A loader with no driver (no ICD) has no device: the error says how many were found."""
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/libvulkan.so.1"):
        pytest.skip("libvulkan.so.1 is not installed")
    lines = _run({"VK_ICD_FILENAMES": "/nonexistent_icd.json",
                  "VK_DRIVER_FILES": "/nonexistent_icd.json"})
    assert lines[0] == "enabled False False None"
    assert "vulkan" in lines[1] and ("does not exist (0 compute-capable devices found)"
                                     in lines[1] or "vkCreateInstance" in lines[1])
