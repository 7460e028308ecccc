"""NDArray: a runtime Tensor object (header + DLTensor), with numpy and DLPack round trips."""
import numpy as np

from . import dlpack
from ._loader import ffi, lib
from .abi import OBJECT_HEADER_BYTES, DeviceType, TypeIndex
from .base import check_call
from .device import Device, cpu
from .dtype import DataType, DataTypeCode
from .object import WRAPPERS, Object

_ALIGN = 64  # kernels assume 64-byte aligned data


class NDArray(Object):
    """An n-dimensional array on a device (owns a reference to a Tensor object)."""

    __slots__ = ("_dl", "_addr", "_keep")

    def __init__(self, handle, keep=None):
        Object.__init__(self, handle)
        self._addr = int(ffi.cast("uintptr_t", handle))
        self._dl = ffi.cast("DLTensor*", ffi.cast("char*", handle) + OBJECT_HEADER_BYTES)
        self._keep = keep

    # ---- properties ------------------------------------------------------------------
    @property
    def _tvm_handle(self):
        """The address of this array's DLTensor (what an extension type's `_tvm_handle` gives
        to pass an array as a DLTensor*)."""
        return int(ffi.cast("uintptr_t", self._dl))

    @property
    def shape(self):
        dl = self._dl
        return tuple(dl.shape[0:dl.ndim]) if dl.ndim else ()

    @property
    def ndim(self):
        return self._dl.ndim

    @property
    def dtype(self):
        d = self._dl.dtype
        return DataType.from_code(d.code, d.bits, d.lanes)

    @property
    def device(self):
        d = self._dl.device
        return Device(d.device_type, d.device_id)

    @property
    def strides(self):
        dl = self._dl
        return None if dl.strides == ffi.NULL else tuple(dl.strides[0:dl.ndim])

    @property
    def byte_offset(self):
        return self._dl.byte_offset

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    # ---- copies ----------------------------------------------------------------------
    def _numpy_shape(self):
        dt = self.dtype
        return self.shape + ((dt.lanes,) if dt.lanes != 1 else ())

    def numpy(self):
        """A numpy copy of the array (strided CPU views are copied through a zero-copy view)."""
        if (self.strides is not None and self.device.device_type == DeviceType.CPU
                and not _is_compact(self)):
            return np.array(np.from_dlpack(self), copy=True)
        out = np.empty(self._numpy_shape(), dtype=self.dtype.numpy_dtype())
        if out.nbytes:
            check_call(lib.mr_tensor_copy_to_bytes(self._dl, ffi.from_buffer(out), out.nbytes))
        return out

    asnumpy = numpy

    def copyfrom(self, source):
        """Copies `source` (an NDArray, a numpy array or anything np.asarray takes) in,
        converting its values to this array's dtype. A uint16 numpy array copied into a
        bfloat16 NDArray gives its bits as they are (classic TVM's way of holding bfloat16)."""
        if isinstance(source, NDArray):
            _check_same(source, self)
            check_call(lib.mr_tensor_copy(source._dl, self._dl, ffi.NULL))
            return self
        dt = self.dtype
        try:
            if (isinstance(source, np.ndarray) and source.dtype == np.uint16
                    and dt.type_code == DataTypeCode.BFLOAT and dt.bits == 16):
                arr = source  # raw bfloat16 bits
            else:
                arr = np.asarray(source, dtype=dt.numpy_dtype())
        except (TypeError, ValueError) as err:
            raise TypeError(f"cannot copy {type(source).__name__} into an NDArray of {dt}: "
                            f"{err}") from None
        if arr.shape != self._numpy_shape():
            raise ValueError(f"array shape {arr.shape} does not match the NDArray's shape "
                             f"{self._numpy_shape()}")
        arr = np.ascontiguousarray(arr)
        if arr.nbytes:
            check_call(lib.mr_tensor_copy_from_bytes(self._dl, ffi.from_buffer(arr), arr.nbytes))
        return self

    def copyto(self, target):
        """Copies into `target` (an NDArray) or into a new array on `target` (a Device)."""
        if isinstance(target, NDArray):
            _check_same(self, target)
            check_call(lib.mr_tensor_copy(self._dl, target._dl, ffi.NULL))
            return target
        if isinstance(target, Device):
            out = empty(self.shape, self.dtype, target)
            check_call(lib.mr_tensor_copy(self._dl, out._dl, ffi.NULL))
            return out
        raise TypeError(f"copyto target must be an NDArray or a Device, not "
                        f"{type(target).__name__}")

    def __setitem__(self, index, value):
        if not (isinstance(index, slice) and index == slice(None)):
            raise ValueError("NDArray only supports whole assignment: arr[:] = value")
        self.copyfrom(value)

    # ---- DLPack ----------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("NDArray.__dlpack__ exports without copying (copy=True asked)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"NDArray is on {self.device}, export to {dl_device} asked")
        return dlpack.to_capsule(self, versioned=max_version is not None and max_version[0] >= 1)

    def __dlpack_device__(self):
        d = self._dl.device
        return (d.device_type, d.device_id)

    def to_dlpack(self):
        """A legacy ("dltensor") DLPack capsule sharing this array's memory."""
        return dlpack.to_capsule(self, versioned=False)

    def __repr__(self):
        return f"<microruntime.NDArray shape={self.shape}, {self.device}>\n{self.numpy()!r}"

    def __str__(self):
        return str(self.numpy())


class NDArrayView(NDArray):
    """A borrowed DLTensor* (what a kernel passes to a Python callback): no object, no owner.

    The memory belongs to the caller, so the view is only valid during the call: afterwards
    `release()` is called and every use raises instead of reading freed memory.
    """

    __slots__ = ()

    def __init__(self, dl, keep=None):
        Object.__init__(self, None)
        self._addr = 0
        NDArray._dl.__set__(self, dl)
        self._keep = keep

    @property
    def _dl(self):
        dl = NDArray._dl.__get__(self)
        if dl is None:
            raise ValueError("this tensor was lent to a Python callback for the duration of the "
                             "call only; copy what you need inside the callback (e.g. .numpy())")
        return dl

    def __repr__(self):
        if NDArray._dl.__get__(self) is None:
            return "<microruntime.NDArray: a tensor lent to a Python callback, no longer valid>"
        return NDArray.__repr__(self)

    def release(self):
        """Ends the loan: the view no longer points at the caller's memory."""
        NDArray._dl.__set__(self, None)
        self._keep = None


WRAPPERS[TypeIndex.TENSOR] = NDArray


def _check_same(src, dst):
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(f"cannot copy an array of {src.dtype}{list(src.shape)} into one of "
                         f"{dst.dtype}{list(dst.shape)}")


def _c_dtype(dtype):
    dt = DataType(dtype)
    c = ffi.new("DLDataType*")
    c.code, c.bits, c.lanes = dt.type_code, dt.bits, dt.lanes
    return c[0]


def empty(shape, dtype="float32", device=None):
    """A new uninitialised array (data 64-byte aligned)."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for dim in shape:
        if not isinstance(dim, (int, np.integer)) or dim < 0:
            raise ValueError(f"shape {shape} must be non-negative integers")
    dev = cpu(0) if device is None else device
    dims = ffi.new("int64_t[]", [int(d) for d in shape] or [0])
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_tensor_create(len(shape), dims, _c_dtype(dtype), dev._c[0], out))
    return NDArray(out[0])


def array(arr, device=None, dtype=None):
    """A new array on `device` (default cpu(0)) holding a copy of `arr`."""
    if isinstance(arr, NDArray):
        if dtype is not None and DataType(dtype) != arr.dtype:
            raise TypeError(f"cannot convert an NDArray of {arr.dtype} to {dtype}")
        return arr.copyto(cpu(0) if device is None else device)
    if dtype is not None:
        dt = DataType(dtype)
        arr = np.asarray(arr, dtype=dt.numpy_dtype())
    else:
        arr = np.asarray(arr)
        dt = DataType(arr.dtype)
    return empty(arr.shape, dt, device).copyfrom(arr)


def from_dlpack(ext_tensor):
    """An NDArray sharing the memory of a DLPack producer (or a DLPack capsule): zero-copy."""
    if isinstance(ext_tensor, NDArray):
        return ext_tensor
    return dlpack.from_producer(ext_tensor, NDArray)


def numpy_argument(arr, temps):
    """A numpy array as a function argument: zero-copy when aligned and compact, else a copy
    that is written back into `arr` after the call (so outputs still land). The caller keeps
    the returned NDArray alive for the duration of the call.

    A read-only array is refused: the runtime cannot tell which arguments a function writes,
    and a write into one would be lost silently (the runtime's own DLPack import refuses
    read-only tensors for the same reason)."""
    if not arr.flags.writeable:
        raise BufferError("a read-only numpy array cannot be passed to a function: the "
                          "function may write it, and the write would be lost; pass a "
                          "writeable array (arr.copy()) or an NDArray (nd.array(arr))")
    if (arr.flags.c_contiguous and arr.ctypes.data % _ALIGN == 0
            and arr.dtype.kind in "biuf"):
        try:
            nd = from_dlpack(arr)
        except (BufferError, TypeError, ValueError, RuntimeError):
            nd = None
        if nd is not None:
            return nd
    nd = array(arr)
    temps.append(_WriteBack(nd, arr))
    return nd


class _WriteBack:
    """Copies a converted argument back into the numpy array it came from after the call."""

    __slots__ = ("nd", "arr")

    def __init__(self, nd, arr):
        self.nd = nd
        self.arr = arr

    def run(self):
        self.arr[...] = self.nd.numpy()


def _is_compact(arr) -> bool:
    """Whether `arr`'s strides are those of a compact row-major layout."""
    expected = 1
    for dim, stride in zip(reversed(arr.shape), reversed(arr.strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True
