"""The ABI facts shared by the runtime and the code the compiler generates, defined once.

Values follow TVM-FFI 0.27 and DLPack (microruntime/include/microruntime/c_api.h and
dlpack.h; tests/microruntime/test_abi.py checks every value here against those headers and the
offsets against a C compiler). The compiler imports this module; it is pure Python and imports
nothing. The classes are plain namespaces of ints (`TypeIndex.TENSOR == 70`), so values print
and compare as the numbers they are.
"""

class TypeIndex:
    """TVMFFITypeIndex: what a TVMFFIAny holds."""
    NONE = 0
    INT = 1
    BOOL = 2
    FLOAT = 3
    OPAQUE_PTR = 4
    DATA_TYPE = 5
    DEVICE = 6
    DLTENSOR_PTR = 7
    RAW_STR = 8
    BYTE_ARRAY_PTR = 9
    OBJECT_RVALUE_REF = 10
    SMALL_STR = 11
    SMALL_BYTES = 12
    OBJECT = 64            # also kTVMFFIStaticObjectBegin: indices >= 64 are objects
    STR = 65
    BYTES = 66
    ERROR = 67
    FUNCTION = 68
    SHAPE = 69
    TENSOR = 70
    ARRAY = 71
    MAP = 72
    MODULE = 73
    OPAQUE_PY_OBJECT = 74
    DYN_OBJECT_BEGIN = 128  # first index handed out to types registered at run time


STATIC_OBJECT_BEGIN = TypeIndex.OBJECT

# How messages name each type index (as the C runtime does).
TYPE_NAMES = {
    TypeIndex.NONE: "None", TypeIndex.INT: "int", TypeIndex.BOOL: "bool",
    TypeIndex.FLOAT: "float", TypeIndex.OPAQUE_PTR: "opaque pointer",
    TypeIndex.DATA_TYPE: "DataType", TypeIndex.DEVICE: "Device",
    TypeIndex.DLTENSOR_PTR: "DLTensor*", TypeIndex.RAW_STR: "str",
    TypeIndex.BYTE_ARRAY_PTR: "bytes", TypeIndex.OBJECT_RVALUE_REF: "ObjectRValueRef",
    TypeIndex.SMALL_STR: "str", TypeIndex.SMALL_BYTES: "bytes", TypeIndex.OBJECT: "Object",
    TypeIndex.STR: "str", TypeIndex.BYTES: "bytes", TypeIndex.ERROR: "Error",
    TypeIndex.FUNCTION: "Function", TypeIndex.SHAPE: "Shape", TypeIndex.TENSOR: "Tensor",
    TypeIndex.ARRAY: "Array", TypeIndex.MAP: "Map", TypeIndex.MODULE: "Module",
}


class DeviceType:
    """DLDeviceType."""
    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONEAPI = 14
    WEBGPU = 15
    HEXAGON = 16


# The name TVM prints for each device type (tvm.runtime.Device.DEVICE_TYPE_TO_NAME).
DEVICE_NAMES = {
    DeviceType.CPU: "cpu", DeviceType.CUDA: "cuda", DeviceType.CUDA_HOST: "cuda_host",
    DeviceType.OPENCL: "opencl", DeviceType.VULKAN: "vulkan", DeviceType.METAL: "metal",
    DeviceType.VPI: "vpi", DeviceType.ROCM: "rocm", DeviceType.ROCM_HOST: "rocm_host",
    DeviceType.EXT_DEV: "ext_dev", DeviceType.CUDA_MANAGED: "cuda_managed",
    DeviceType.ONEAPI: "oneapi", DeviceType.WEBGPU: "webgpu", DeviceType.HEXAGON: "hexagon",
}


class DataTypeCode:
    """DLDataTypeCode."""
    INT = 0
    UINT = 1
    FLOAT = 2
    OPAQUE_HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6


# How error messages spell each dtype code ("dtype" for any other); the generated argument
# checks (the LLVM helpers, the C prelude's table) write names with these.
DTYPE_CODE_NAMES = {DataTypeCode.INT: "int", DataTypeCode.UINT: "uint",
                    DataTypeCode.FLOAT: "float", DataTypeCode.OPAQUE_HANDLE: "handle",
                    DataTypeCode.BFLOAT: "bfloat", DataTypeCode.COMPLEX: "complex",
                    DataTypeCode.BOOL: "bool"}


# Layout (x86-64, AArch64 and every other LP64 target; 64-bit pointers).
ANY_BYTES = 16               # sizeof(TVMFFIAny): type_index, padding, one 8-byte value
ANY_VALUE_OFFSET = 8         # offsetof(TVMFFIAny, v_int64 / v_ptr / ...)
OBJECT_HEADER_BYTES = 24     # sizeof(TVMFFIObject); a Tensor object's DLTensor follows it

# DLTensor field -> byte offset (DLTensor is 48 bytes).
DLTENSOR_OFFSETS = {
    "data": 0, "device_type": 8, "device_id": 12, "ndim": 16, "dtype_code": 20,
    "dtype_bits": 21, "dtype_lanes": 22, "shape": 24, "strides": 32, "byte_offset": 40,
}
DLTENSOR_BYTES = 48
