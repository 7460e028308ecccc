"""Device code generation: the kernels of a GPU build -> one device module (TVM's CUDAModule /
OpenCLModule / MetalModule), imported by the host module that launches them.

    codegen_device(kernels: IRModule, target) -> DeviceModule

`kernels` are the device kernels of split_host_device after the device passes
(compiler/tir/pipeline.py `device_passes`). Each dialect printer (c_family/cuda.py, opencl.py,
metal.py) prints every kernel; the frame comes from codegen_templates/<dialect>/. CUDA source is
compiled to PTX with nvcc (compiler/contrib/nvcc.py) when nvcc is there; without it the module
keeps the CUDA source (fmt "cu"), which exports but no runtime can load.

A DeviceModule is a SerializedModule (serialized_module.py): kind "cuda" | "opencl" |
"metal" and the payload of TVM's SaveToBytes (GPU contract §1):
`str fmt; u64 nfuncs; nfuncs x {str key; str name; vec<DLDataType> arg_types;
vec<str> launch_param_tags; vec<i32> arg_extra_tags}; str code`. It loads into the runtime
lazily (the registered `ffi.Module.load_from_bytes.<kind>`), and needs no driver for
`get_source`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from ..contrib import nvcc
from ..ir.dtype import DType
from ..ir.errors import BuildError, TargetError
from .c_family.cuda import CUDAPrinter
from .c_family.device import GPUPrinter, typed_helpers
from .c_family.metal import MetalPrinter
from .c_family.opencl import OpenCLPrinter
from .serialized_module import SerializedModule
from .templates import render

# target kind -> (module kind, printer, template, source format)
DIALECTS = {
    "cuda": ("cuda", CUDAPrinter, "cuda/module.cu.j2", "cu"),
    "opencl": ("opencl", OpenCLPrinter, "opencl/module.cl.j2", "cl"),
    "metal": ("metal", MetalPrinter, "metal/module.metal.j2", "metal"),
}
_HANDLE = (3, 64, 1)


@dataclass
class FunctionInfo:
    """What the runtime needs to launch one kernel (TVM's FunctionInfo)."""
    name: str
    arg_types: Tuple[Tuple[int, int, int], ...]   # (code, bits, lanes) per argument
    launch_param_tags: Tuple[str, ...]
    arg_extra_tags: Tuple[int, ...] = ()


def _u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def _str(s) -> bytes:
    data = s.encode() if isinstance(s, str) else bytes(s)
    return _u64(len(data)) + data


def pack_device_module(fmt: str, infos: Sequence[FunctionInfo], code) -> bytes:
    """The SaveToBytes payload of a device module (GPU contract §1)."""
    out = _str(fmt) + _u64(len(infos))
    for info in infos:
        out += _str(info.name) + _str(info.name)
        out += _u64(len(info.arg_types))
        out += b"".join(struct.pack("<BBH", *t) for t in info.arg_types)
        out += _u64(len(info.launch_param_tags)) + b"".join(_str(t) for t in
                                                              info.launch_param_tags)
        extra = info.arg_extra_tags or (0,) * len(info.arg_types)
        out += _u64(len(extra)) + b"".join(struct.pack("<i", t) for t in extra)
    return out + _str(code)


class DeviceModule(SerializedModule):
    """The device code of a GPU build: source, binary format and code, function infos."""

    def __init__(self, kind: str, fmt: str, code: str, source: str,
                 infos: Sequence[FunctionInfo], source_fmt: str):
        self.fmt, self.code, self.source = fmt, code, source
        self.source_fmt = source_fmt
        self.function_infos = list(infos)
        super().__init__(kind, pack_device_module(fmt, infos, code))

    def get_source(self, fmt: str = "") -> str:
        """The generated source ("" or the dialect's format: "cuda"/"cu", "cl"/"opencl",
        "metal"), or the compiled code in its format ("ptx")."""
        if fmt in ("", self.kind, self.source_fmt, "source"):
            return self.source
        if fmt == self.fmt:
            return self.code
        raise ValueError(f"Module[{self.kind}] has no source in format {fmt!r} (available: "
                         f"{', '.join(sorted({self.kind, self.source_fmt, self.fmt}))})")

    inspect_source = get_source
    type_key = property(lambda self: self.kind)
    format = property(lambda self: self.fmt)

    def _loaded(self):
        runtime = self.runtime_module
        if runtime is None:
            raise RuntimeError(f"no runtime loader for device modules of kind {self.kind!r} is "
                               f"registered (ffi.Module.load_from_bytes.{self.kind}); this "
                               "module only exports and shows its source")
        return runtime

    def get_function(self, name, query_imports=False):
        return self._loaded().get_function(name, query_imports)

    def __getitem__(self, name):
        return self._loaded()[name]

    def implements_function(self, name, query_imports=False):
        return any(i.name == name for i in self.function_infos)

    def save(self, file_name, fmt=""):
        with open(file_name, "w") as f:
            f.write(self.get_source(fmt))

    def __repr__(self):
        return f"Module({self.kind}, {len(self.function_infos)} kernel(s), fmt {self.fmt})"


def dtype_triple(t: DType) -> Tuple[int, int, int]:
    if t.is_handle:
        return _HANDLE
    return (t.code, 8 if t.is_bool else t.bits, t.lanes)


def generate_source(kernels, target) -> Tuple[str, List[FunctionInfo]]:
    """The dialect source of every kernel of `kernels` (an IRModule) and their infos."""
    kind = target.kind.name
    if kind not in DIALECTS:
        raise TargetError(f"no device code generator for target {kind!r}; GPU code is "
                          f"generated for {', '.join(sorted(DIALECTS))}")
    _, printer_cls, template, _ = DIALECTS[kind]
    rendered, infos, helpers = [], [], set()
    qualifier = printer_cls.helper_qualifier
    for gname, func in kernels.items():
        printer: GPUPrinter = printer_cls(func)
        name = func.attrs.get("global_symbol", gname)
        printer.taken.update({"blockIdx", "threadIdx", "arg", name})
        printer.print_kernel()
        params = list(func.params)
        entry = {"name": name, "body": printer.text(), "threads": printer.block_threads()}
        if isinstance(printer, MetalPrinter):
            entry["params"], entry["scalars"] = printer.kernel_params(params)
            prologue = printer.scalar_prologue(params)
            entry["body"] = "".join(printer.indent_unit + p + "\n" for p in prologue) + \
                entry["body"]
        else:
            entry["params"] = [printer.param_decl(p, i) for i, p in enumerate(params)]
        entry["local_size"] = _local_size(printer)
        rendered.append(entry)
        helpers |= printer.helpers
        tags = tuple(func.attrs.get("tir.kernel_launch_params", ()))
        infos.append(FunctionInfo(name, tuple(dtype_triple(p.dtype) for p in params), tags))
    text = render(template, target=str(target), kernels=rendered, helpers=helpers,
                  typed_helpers=typed_helpers(helpers), helper_qualifier=qualifier)
    return text, infos


def _local_size(printer: GPUPrinter) -> Optional[List[int]]:
    """The constant work-group size (x, y, z) of a kernel, or None."""
    sizes = []
    for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
        extent = printer.launch.get(tag)
        if extent is None:
            sizes.append(1)
        elif hasattr(extent, "value"):
            sizes.append(extent.value)
        else:
            return None
    return sizes


def codegen_device(kernels, target) -> DeviceModule:
    """The device module of `kernels` for the C-family GPU `target` (see the module doc);
    target "vulkan" has its own (compiler/codegen/spirv/)."""
    kind, _, _, source_fmt = DIALECTS.get(target.kind.name, (None,) * 4)
    source, infos = generate_source(kernels, target)
    fmt, code = source_fmt, source
    if kind == "cuda":
        if nvcc.find_nvcc() is not None:
            fmt, code = "ptx", nvcc.compile_cuda(source, "ptx", arch=target.get("arch"))
    elif kind == "opencl":
        fmt = "cl"
    if kind is None:
        raise BuildError(f"no device code generator for target {target.kind.name!r}")
    return DeviceModule(kind, fmt, code, source, infos, source_fmt)
