"""Classic TVM's argument type codes (`tvm._ffi.runtime_ctypes.ArgTypeCode`), which extension
classes name in `_tvm_tcode`, beside the runtime's DataType and Device."""
import enum

from .device import Device  # noqa: F401 (runtime_ctypes.Device)
from .dtype import DataType, DataTypeCode  # noqa: F401 (runtime_ctypes.DataType)


class ArgTypeCode(enum.IntEnum):
    """The type code of an argument in the classic (pre TVM-FFI) calling convention."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    NULL = 4
    TVM_TYPE = 5
    DLDEVICE = 6
    DLTENSOR_HANDLE = 7
    OBJECT_HANDLE = 8
    MODULE_HANDLE = 9
    PACKED_FUNC_HANDLE = 10
    STR = 11
    BYTES = 12
    NDARRAY_HANDLE = 13
    OBJECT_RVALUE_REF_ARG = 14
    EXT_BEGIN = 15
