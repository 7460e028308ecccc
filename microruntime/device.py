"""Device: a DLDevice (device_type, device_id) with the properties its backend reports."""
import json

from ._loader import ffi, lib
from .abi import DEVICE_NAMES, DeviceType, TypeIndex
from .base import check_call
from .object import bytes_of

# DLDeviceType values under the names TVM's Python API uses.
kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL = (DeviceType.CPU, DeviceType.CUDA,
                                           DeviceType.CUDA_HOST, DeviceType.OPENCL)
kDLVulkan, kDLMetal, kDLVPI = DeviceType.VULKAN, DeviceType.METAL, DeviceType.VPI
kDLROCM, kDLExtDev = DeviceType.ROCM, DeviceType.EXT_DEV

DEVICE_TYPE_OF_NAME = {
    "cpu": kDLCPU, "llvm": kDLCPU, "c": kDLCPU, "stackvm": kDLCPU,
    "cuda": kDLCUDA, "gpu": kDLCUDA, "nvptx": kDLCUDA, "cuda_host": kDLCUDAHost,
    "cl": kDLOpenCL, "opencl": kDLOpenCL,
    "vulkan": kDLVulkan, "metal": kDLMetal, "mtl": kDLMetal,
    "vpi": kDLVPI, "rocm": kDLROCM, "ext_dev": kDLExtDev,
}
NAME_OF_DEVICE_TYPE = dict(DEVICE_NAMES)

# mr_device_attr_t
_ATTR = {
    "exist": 0, "max_threads_per_block": 1, "warp_size": 2, "max_shared_memory_per_block": 3,
    "compute_version": 4, "device_name": 5, "max_clock_rate": 6, "multi_processor_count": 7,
    "max_thread_dimensions": 8, "max_registers_per_block": 9, "gcn_arch": 10,
    "api_version": 11, "driver_version": 12, "l2_cache_size_bytes": 13,
    "total_global_memory": 14, "available_global_memory": 15,
}


def _attr_property(name, doc):
    def getter(self):
        return self._get_attr(_ATTR[name])

    return property(getter, doc=doc)


class Device:
    """A device (DLDevice): `Device(1, 0)` is `cpu(0)`."""

    __slots__ = ("device_type", "device_id", "_c")

    def __init__(self, device_type, device_id=0):
        self.device_type = int(device_type)
        self.device_id = int(device_id)
        c = ffi.new("DLDevice*")
        c.device_type = self.device_type
        c.device_id = self.device_id
        self._c = c

    @property
    def packed(self):
        """The DLDevice as the 64-bit integer it occupies in memory (little-endian)."""
        return (self.device_type & 0xFFFFFFFF) | ((self.device_id & 0xFFFFFFFF) << 32)

    def dlpack_device_type(self):
        return self.device_type

    @property
    def index(self):
        return self.device_id

    def _has_backend(self):
        if lib.mr_device_api_get(self.device_type) == ffi.NULL:
            lib.mr_error_clear()
            return False
        return True

    def _get_attr(self, attr):
        if not self._has_backend():
            return None
        out = ffi.new("TVMFFIAny*")
        if lib.mr_device_get_attr(self._c[0], attr, out) != 0:
            lib.mr_error_clear()
            return None
        return _attr_value(out)

    @property
    def exist(self):
        """Whether the runtime has a backend for this device and the device is present."""
        return bool(self._get_attr(_ATTR["exist"]))

    max_threads_per_block = _attr_property("max_threads_per_block", "Max threads per block.")
    warp_size = _attr_property("warp_size", "Threads that execute concurrently.")
    max_shared_memory_per_block = _attr_property(
        "max_shared_memory_per_block", "Shared memory per block in bytes.")
    compute_version = _attr_property("compute_version", "Compute version, as a string.")
    device_name = _attr_property("device_name", "Vendor-specific device name.")
    max_clock_rate = _attr_property("max_clock_rate", "Max clock frequency (kHz).")
    multi_processor_count = _attr_property("multi_processor_count", "Number of compute units.")
    api_version = _attr_property("api_version", "Version of the SDK the backend was built for.")
    driver_version = _attr_property("driver_version", "Version of the driver.")
    max_registers_per_block = _attr_property("max_registers_per_block", "Registers per block.")
    l2_cache_size_bytes = _attr_property("l2_cache_size_bytes", "L2 cache size in bytes.")
    total_global_memory = _attr_property("total_global_memory", "Global memory in bytes.")

    @property
    def max_thread_dimensions(self):
        """The maximum extents of threadIdx.x, .y, .z (a list), or None."""
        value = self._get_attr(_ATTR["max_thread_dimensions"])
        if isinstance(value, str):
            value = json.loads(value)
        return None if value is None else list(value)

    def create_raw_stream(self):
        """A new stream on this device (free it with free_raw_stream)."""
        out = ffi.new("void**")
        check_call(lib.mr_device_stream_create(self._c[0], out))
        return out[0]

    def free_raw_stream(self, stream):
        check_call(lib.mr_device_stream_free(self._c[0], _stream_ptr(stream)))

    def set_raw_stream(self, stream):
        check_call(lib.mr_device_set_stream(self._c[0], _stream_ptr(stream)))

    def sync(self, stream=None):
        """Waits until the work queued on `stream` (default: the current stream) finished."""
        check_call(lib.mr_device_stream_sync(self._c[0], _stream_ptr(stream)))

    def __eq__(self, other):
        return (isinstance(other, Device) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        name = NAME_OF_DEVICE_TYPE.get(self.device_type, f"device_type{self.device_type}")
        return f"{name}({self.device_id})"

    __str__ = __repr__

    def __reduce__(self):
        return (Device, (self.device_type, self.device_id))


def _attr_value(slot):
    """The device attribute a backend wrote into `slot` (owned): an int (or bool), a str, or
    None when the device has no such property; another kind of object is released, as None."""
    t = slot.type_index
    if t == TypeIndex.INT:
        return int(slot.v_int64)
    if t == TypeIndex.BOOL:
        return slot.v_int64 != 0
    if t >= TypeIndex.OBJECT:
        try:
            return bytes_of(slot.v_obj).decode("utf-8", "replace") if t == TypeIndex.STR else None
        finally:
            lib.mr_object_release(slot.v_obj)
    return None


def _stream_ptr(stream):
    if stream is None:
        return ffi.NULL
    if isinstance(stream, int):
        return ffi.cast("void*", stream)
    return stream


def device(dev_type, dev_id=0):
    """A Device from a name ("cpu", "cuda", "opencl -device=x", ...) or a DLDeviceType."""
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, str):
        name = dev_type.split()[0] if dev_type.strip() else dev_type
        if ":" in name:
            name, _, idx = name.partition(":")
            dev_id = int(idx)
        if name not in DEVICE_TYPE_OF_NAME:
            raise ValueError(f"unknown device type {dev_type!r}; known: "
                             f"{', '.join(sorted(DEVICE_TYPE_OF_NAME))}")
        return Device(DEVICE_TYPE_OF_NAME[name], dev_id)
    if isinstance(dev_type, int):
        return Device(dev_type, dev_id)
    raise TypeError(f"device type must be a str or an int, not {type(dev_type).__name__}")


def cpu(dev_id=0):
    return Device(kDLCPU, dev_id)


def cuda(dev_id=0):
    return Device(kDLCUDA, dev_id)


def gpu(dev_id=0):
    """Deprecated alias of cuda()."""
    return Device(kDLCUDA, dev_id)


def opencl(dev_id=0):
    return Device(kDLOpenCL, dev_id)


cl = opencl


def vulkan(dev_id=0):
    return Device(kDLVulkan, dev_id)


def metal(dev_id=0):
    return Device(kDLMetal, dev_id)


mtl = metal


def vpi(dev_id=0):
    return Device(kDLVPI, dev_id)


def rocm(dev_id=0):
    return Device(kDLROCM, dev_id)


def ext_dev(dev_id=0):
    return Device(kDLExtDev, dev_id)
