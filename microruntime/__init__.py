"""microruntime: the Kiln runtime's Python package (mirrors `tvm.runtime`).

Loads compiled libraries and calls their functions through the TVM-FFI C ABI; needs only numpy
and cffi (never the compiler).
"""
# The graph executor's loader (GraphExecutorFactory modules) is registered on import, so
# load_module("model.so") works without importing it first.
from . import (
    graph_executor,  # noqa: E402  (after the modules it uses)
    nd,
    relax_vm,  # registers the relax.VMExecutable loader and vm.builtin.*
)
from .base import register_error
from .device import (
    Device,
    cl,
    cpu,
    cuda,
    device,
    ext_dev,
    gpu,
    metal,
    mtl,
    opencl,
    rocm,
    vpi,
    vulkan,
)
from .dtype import DataType, DataTypeCode
from .module import Module, enabled, load_module, load_static_library, num_threads, system_lib
from .ndarray import NDArray, from_dlpack
from .object import Array, Object, ObjectGeneric, ShapeTuple, String
from .object_generic import const, convert, convert_to_object
from .packed_func import (
    PackedFunc,
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)
from .params import load_param_dict, save_param_dict
from .profiling import BenchmarkResult, Report

tensor = nd.array

__version__ = "0.1.0"

__all__ = [
    "Array", "BenchmarkResult", "Report", "DataType", "DataTypeCode", "Device", "Module", "NDArray",
    "Object", "ObjectGeneric", "PackedFunc", "ShapeTuple", "String", "cl", "const", "convert",
    "convert_to_object", "cpu", "cuda", "device", "enabled", "ext_dev", "from_dlpack",
    "get_global_func", "gpu", "graph_executor", "list_global_func_names", "load_module",
    "load_param_dict",
    "load_static_library", "metal", "mtl", "nd", "num_threads", "opencl", "register_error",
    "register_func", "relax_vm", "remove_global_func", "rocm", "save_param_dict", "system_lib",
    "tensor", "vpi", "vulkan",
]
