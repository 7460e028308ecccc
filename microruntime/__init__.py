"""microruntime: the Kiln runtime's Python package (mirrors `tvm.runtime`).

Loads compiled libraries and calls their functions through the TVM-FFI C ABI; needs only numpy
and cffi (never the compiler).
"""
from . import aot_executor, container, graph_executor, nd, relax_vm, runtime_ctypes
from ._loader import lib as _lib
from .base import check_call as _check_call
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
from .extension import register_extension
from .module import Module, enabled, load_module, load_static_library, num_threads, system_lib
from .ndarray import NDArray, from_dlpack
from .object import Object, ObjectGeneric, OpaqueValue, ShapeTuple, String
from .object_generic import Array, Map, const, convert, convert_to_object
from .packed_func import (
    PackedFunc,
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)
from .params import (
    load_param_dict,
    load_param_dict_from_file,
    save_param_dict,
    save_param_dict_to_file,
)
from .profiling import BenchmarkResult, Report

tensor = nd.array

# The runtime's optional parts, each registered by its own call (the C core names none of them),
# so that load_module("model.so") finds the loaders of every kind of module a library holds:
# the graph executor (GraphExecutorFactory, with TVM's globals and packed functions), the Relax
# VM (relax.VMExecutable, vm.builtin.*) and the GPU backends (their device APIs and the device
# module kinds cuda, opencl, vulkan).
_check_call(_lib.mr_graph_executor_register())
_check_call(_lib.mr_vm_register_extras())
_check_call(_lib.mr_gpu_register())

__version__ = "0.1.0"

__all__ = [
    "Array", "BenchmarkResult", "Report", "DataType", "DataTypeCode", "Device", "Map", "Module",
    "NDArray", "Object", "ObjectGeneric", "OpaqueValue", "PackedFunc", "ShapeTuple", "String",
    "cl", "const", "convert",
    "convert_to_object", "cpu", "cuda", "device", "enabled", "ext_dev", "from_dlpack",
    "aot_executor", "container", "get_global_func", "gpu", "graph_executor",
    "list_global_func_names",
    "load_module",
    "load_param_dict", "load_param_dict_from_file", "save_param_dict_to_file",
    "load_static_library", "metal", "mtl", "nd", "num_threads", "opencl", "register_error",
    "register_extension", "register_func", "relax_vm", "remove_global_func", "rocm",
    "runtime_ctypes", "save_param_dict", "system_lib", "tensor", "vpi", "vulkan",
]
