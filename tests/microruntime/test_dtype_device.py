import pickle

import numpy as np
import pytest

import microruntime as mr
from microruntime import DataType, DataTypeCode, Device


@pytest.mark.parametrize("text, code, bits, lanes", [
    ("float32", 2, 32, 1), ("float16", 2, 16, 1), ("float64", 2, 64, 1), ("int8", 0, 8, 1),
    ("int64", 0, 64, 1), ("uint8", 1, 8, 1), ("uint1", 1, 1, 1), ("bool", 6, 8, 1),
    ("handle", 3, 64, 1), ("bfloat16", 4, 16, 1), ("float32x4", 2, 32, 4), ("int8x16", 0, 8, 16),
    ("float8_e4m3fn", 10, 8, 1), ("float8_e5m2", 12, 8, 1),
])
def test_datatype_parse_and_format(text, code, bits, lanes):
    dt = DataType(text)
    assert (dt.type_code, dt.bits, dt.lanes) == (code, bits, lanes)
    assert str(dt) == text and dt == text and dt == DataType(text)
    assert hash(dt) == hash(DataType.from_code(code, bits, lanes))
    assert DataType.from_code(code, bits, lanes) == dt
    assert pickle.loads(pickle.dumps(dt)) == dt


def test_datatype_aliases_numpy_and_errors():
    assert DataType("float") == "float32" and DataType("int") == "int32"
    assert DataType(np.float16) == "float16" and DataType(np.dtype("bool")) == "bool"
    assert DataType("float32").itemsize == 4 and DataType("float16x4").itemsize == 8
    assert DataType("float32") != DataType("float16")
    assert DataTypeCode.FLOAT == 2 and DataTypeCode.BOOL == 6
    assert repr(DataType("int8")) == "DataType('int8')"
    with pytest.raises(ValueError, match="unknown data type 'flot32'"):
        DataType("flot32")


@pytest.mark.parametrize("name, dev_type", [
    ("cpu", 1), ("llvm", 1), ("c", 1), ("cuda", 2), ("gpu", 2), ("nvptx", 2), ("cl", 4),
    ("opencl", 4), ("vulkan", 7), ("metal", 8), ("mtl", 8), ("vpi", 9), ("rocm", 10),
    ("ext_dev", 12),
])
def test_device_names(name, dev_type):
    dev = mr.device(name, 1)
    assert dev.device_type == dev_type and dev.device_id == 1
    assert mr.device(dev_type, 1) == dev and hash(mr.device(dev_type, 1)) == hash(dev)


def test_device_constructors_and_repr():
    assert mr.cpu() == Device(1, 0) and mr.cuda(2) == Device(2, 2) and mr.gpu() == mr.cuda()
    assert mr.cl(0) == mr.opencl(0) and mr.mtl(0) == mr.metal(0)
    assert mr.vulkan(0).device_type == 7 and mr.vpi(0).device_type == 9
    assert mr.rocm(0).device_type == 10 and mr.ext_dev(0).device_type == 12
    assert repr(mr.cpu(0)) == "cpu(0)" and str(mr.cuda(3)) == "cuda(3)"
    assert mr.cpu(0) != mr.cpu(1) and mr.cpu(0) != "cpu"
    assert mr.device("cpu:2") == mr.cpu(2) and mr.device("llvm -mcpu=x") == mr.cpu(0)
    assert {mr.cpu(0), mr.cpu(0), mr.cuda(0)} == {mr.cpu(0), mr.cuda(0)}
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        mr.device("tpu")


def test_cpu_properties():
    dev = mr.cpu(0)
    assert dev.exist is True
    for prop in ("max_threads_per_block", "warp_size", "compute_version", "max_clock_rate",
                 "multi_processor_count", "max_thread_dimensions", "api_version",
                 "driver_version", "max_shared_memory_per_block"):
        value = getattr(dev, prop)
        assert value is None or isinstance(value, (int, str, list)), (prop, value)
    dev.sync()


def test_devices_without_backend():
    dev = mr.ext_dev(0)
    assert dev.exist is False
    assert dev.max_threads_per_block is None and dev.device_name is None
    assert mr.enabled("cpu") and mr.enabled("llvm") and mr.enabled("c")
    assert mr.enabled("ext_dev") is False and mr.enabled("no_such_target") is False
    for kind in ("cuda", "opencl", "vulkan"):
        assert isinstance(mr.enabled(kind), bool)
        if not mr.enabled(kind):
            assert mr.device(kind).exist is False


def test_num_threads():
    assert mr.num_threads() >= 1


@pytest.mark.parametrize("text, why", [
    ("float33", "float takes 16, 32 or 64 bits"), ("float8", "float takes 16, 32 or 64 bits"),
    ("int3", "int takes 1, 4, 8, 16, 32 or 64 bits"), ("bfloat32", "bfloat takes 16 bits"),
    ("complex32", "complex takes 64 or 128 bits"), ("float032", "float takes"),
    ("float32x0", "lanes must be 1 to 65535"), ("int8x65536", "lanes must be 1 to 65535"),
    ("float32x", "lanes must be"), ("voidx2", "void takes no lanes"),
])
def test_datatype_refuses_what_tvm_does_not_name(text, why):
    with pytest.raises(ValueError, match=f"unknown data type '{text}': {why}"):
        DataType(text)
    with pytest.raises(ValueError, match=f"unknown data type '{text}'"):
        mr.nd.empty((2,), text)


@pytest.mark.parametrize("text, code, bits, lanes", [
    ("complex64", 5, 64, 1), ("complex128x2", 5, 128, 2), ("int4", 0, 4, 1), ("boolx4", 6, 8, 4),
    ("float64x65535", 2, 64, 65535),
])
def test_datatype_names_with_lanes_and_widths(text, code, bits, lanes):
    dt = DataType(text)
    assert (dt.type_code, dt.bits, dt.lanes) == (code, bits, lanes) and dt == text
    assert DataType(np.complex64) == "complex64"
