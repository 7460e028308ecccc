"""SPIR-V for Vulkan: the kernels of a GPU build for target "vulkan" -> a device module of
kind "vulkan" (TVM's VulkanModule), one SPIR-V compute shader per kernel.

The binary is written directly from Python, word by word (builder.py: a small SPIR-V module
builder; codegen.py: kernel IR -> instructions), rather than rendered as assembly text and
assembled: the compiler then needs no Vulkan SDK, no glslang and no spirv-as at build time, and
types, constants and ids are exact by construction. spirv-tools is only a checker here
(`spirv-val` in the tests) and a pretty-printer (`spirv-dis` for `get_source()` when installed;
otherwise a plain listing of the words).

Payload of a "vulkan" module (TVM's VulkanModuleNode::SaveToBytes, so libraries interoperate):
`str fmt` ("vulkan"); `u64 n; n x {str key; FunctionInfo}` (the function map, as the other
device modules write it); `u64 n; n x {str key; u32 flag; u64 nwords; u32 words[nwords]}`
(the shader map: flag 0 = scalars in push constants, bit 0 = in a uniform buffer).
"""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from typing import Dict, List, Sequence

from ..device_module import FunctionInfo, dtype_triple
from ..serialized_module import SerializedModule
from .builder import listing
from .codegen import kernel_spirv

__all__ = ["codegen_vulkan", "VulkanModule", "kernel_spirv", "disassemble", "pack_vulkan_module"]


def _str(s) -> bytes:
    data = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(data)) + data


def _function_info(info: FunctionInfo) -> bytes:
    out = _str(info.name) + struct.pack("<Q", len(info.arg_types))
    out += b"".join(struct.pack("<BBH", *t) for t in info.arg_types)
    out += struct.pack("<Q", len(info.launch_param_tags))
    out += b"".join(_str(t) for t in info.launch_param_tags)
    extra = info.arg_extra_tags or (0,) * len(info.arg_types)
    return out + struct.pack("<Q", len(extra)) + b"".join(struct.pack("<i", t) for t in extra)


def pack_vulkan_module(infos: Sequence[FunctionInfo], shaders: Dict[str, bytes],
                       flag: int = 0) -> bytes:
    """The SaveToBytes payload of a "vulkan" module (see the module doc)."""
    out = _str("vulkan") + struct.pack("<Q", len(infos))
    for info in infos:
        out += _str(info.name) + _function_info(info)
    out += struct.pack("<Q", len(shaders))
    for name, binary in shaders.items():
        out += _str(name) + struct.pack("<IQ", flag, len(binary) // 4) + binary
    return out


def disassemble(binary: bytes) -> str:
    """spirv-dis's text of a SPIR-V binary, or a plain listing without spirv-tools."""
    tool = shutil.which("spirv-dis")
    if tool is not None:
        with tempfile.NamedTemporaryFile(suffix=".spv") as f:
            f.write(binary)
            f.flush()
            done = subprocess.run([tool, "--raw-id", f.name], capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    return listing(words)


class VulkanModule(SerializedModule):
    """The SPIR-V of a GPU build for Vulkan: shaders by kernel name, function infos."""

    def __init__(self, shaders: Dict[str, bytes], infos: Sequence[FunctionInfo]):
        self.fmt = "vulkan"
        self.shaders = dict(shaders)
        self.function_infos: List[FunctionInfo] = list(infos)
        self._source = None
        super().__init__("vulkan", pack_vulkan_module(infos, shaders))

    def get_source(self, fmt: str = "") -> str:
        """The disassembly of every shader ("", "vulkan", "spirv", "spv", "asm")."""
        if fmt not in ("", "vulkan", "spirv", "spv", "asm", "source"):
            raise ValueError(f"Module[vulkan] has no source in format {fmt!r} (available: "
                             "spirv)")
        if self._source is None:
            self._source = "".join(f"; kernel {name}\n{disassemble(binary)}"
                                   for name, binary in self.shaders.items())
        return self._source

    inspect_source = get_source
    type_key = property(lambda self: self.kind)
    format = property(lambda self: self.fmt)

    def _loaded(self):
        runtime = self.runtime_module
        if runtime is None:
            raise RuntimeError("no runtime loader for device modules of kind 'vulkan' is "
                               "registered (ffi.Module.load_from_bytes.vulkan); this module "
                               "only exports and shows its source")
        return runtime

    def get_function(self, name, query_imports=False):
        return self._loaded().get_function(name, query_imports)

    def __getitem__(self, name):
        return self._loaded()[name]

    def implements_function(self, name, query_imports=False):
        return name in self.shaders

    def save(self, file_name, fmt=""):
        if file_name.endswith(".spv"):
            if len(self.shaders) != 1:
                raise ValueError("a .spv file holds one shader; this module has "
                                 f"{len(self.shaders)}")
            with open(file_name, "wb") as f:
                f.write(next(iter(self.shaders.values())))
            return
        with open(file_name, "w") as f:
            f.write(self.get_source(fmt))

    def __repr__(self):
        return f"Module(vulkan, {len(self.shaders)} kernel(s), fmt spirv)"


def codegen_vulkan(kernels, target) -> VulkanModule:
    """The "vulkan" device module of `kernels` (an IRModule of device kernels)."""
    shaders: Dict[str, bytes] = {}
    infos: List[FunctionInfo] = []
    for gname, func in kernels.items():
        name = func.attrs.get("global_symbol", gname)
        shaders[name] = kernel_spirv(func, name, target)
        tags = tuple(func.attrs.get("tir.kernel_launch_params", ()))
        infos.append(FunctionInfo(name, tuple(dtype_triple(p.dtype) for p in func.params), tags))
    return VulkanModule(shaders, infos)
