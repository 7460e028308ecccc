"""The OpenCL device on the machine's driver (PoCL here): properties against what pyopencl
reports for the same device, arrays to and from the device, device-to-device copies, streams."""
import re

import numpy as np
import pytest

import microruntime as mr
from microruntime import nd

pytestmark = pytest.mark.skipif(not mr.enabled("opencl"),
                                reason="no OpenCL driver with a device (libOpenCL.so.1)")


@pytest.fixture(scope="module")
def cl_device():
    """pyopencl's view of device 0 (the runtime lists GPUs first, else every device)."""
    cl = pytest.importorskip("pyopencl")
    devices = [d for p in cl.get_platforms() for d in p.get_devices(cl.device_type.GPU)]
    if not devices:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    return devices[0]


def test_properties_match_the_driver(cl_device):
    dev = mr.opencl(0)
    assert dev.exist is True
    assert dev.device_name == cl_device.name
    assert dev.max_threads_per_block == cl_device.max_work_group_size
    assert dev.warp_size == 1
    assert dev.max_shared_memory_per_block == cl_device.local_mem_size
    assert dev.max_clock_rate == cl_device.max_clock_frequency * 1000  # kHz
    assert dev.multi_processor_count == cl_device.max_compute_units
    assert dev.max_thread_dimensions == list(cl_device.max_work_item_sizes)[:3]
    assert dev.driver_version == cl_device.driver_version
    assert dev.total_global_memory == cl_device.global_mem_size
    assert re.fullmatch(r"\d+\.\d+", dev.compute_version)
    assert cl_device.version.startswith("OpenCL " + dev.compute_version)
    assert dev.api_version == 120
    assert dev.max_registers_per_block is None


def test_missing_device_id():
    dev = mr.opencl(9)
    assert dev.exist is False and dev.device_name is None
    with pytest.raises(RuntimeError, match="opencl: device 9 does not exist"):
        nd.empty((4,), "float32", dev)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64", "float16"])
@pytest.mark.parametrize("shape", [(17,), (3, 5, 2), (), (0, 4)])
def test_round_trip(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    a = nd.array(x, mr.opencl(0))
    assert a.device == mr.opencl(0) and a.shape == shape and str(a.dtype) == dtype
    np.testing.assert_array_equal(a.numpy(), x)


def test_copies_between_arrays():
    dev = mr.opencl(0)
    x = np.arange(1000, dtype="float32")
    a = nd.array(x, dev)
    b = a.copyto(dev)  # device to device
    c = nd.empty((1000,), "float32", dev)
    c.copyfrom(b)
    a.copyfrom(np.zeros(1000, "float32"))  # b and c are copies, not views
    np.testing.assert_array_equal(b.numpy(), x)
    np.testing.assert_array_equal(c.numpy(), x)
    np.testing.assert_array_equal(c.copyto(mr.cpu(0)).numpy(), x)
    host = nd.array(np.ones(1000, "float32"))
    host.copyto(c)  # host to device into an existing array
    np.testing.assert_array_equal(c.numpy(), 1)
    d = nd.array(c, mr.opencl(0))
    np.testing.assert_array_equal(d.numpy(), 1)
    with pytest.raises(ValueError, match="does not match"):
        c.copyfrom(np.zeros(3, "float32"))


def test_streams():
    dev = mr.opencl(0)
    stream = dev.create_raw_stream()
    assert stream is not None
    dev.set_raw_stream(stream)
    try:
        x = np.arange(64, dtype="int32")
        a = nd.array(x, dev)  # queued on the new stream
        b = a.copyto(dev)
        dev.sync()
        dev.sync(stream)
        np.testing.assert_array_equal(b.numpy(), x)
    finally:
        dev.set_raw_stream(None)
        dev.free_raw_stream(stream)
    dev.sync()
