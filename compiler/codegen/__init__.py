"""Code generators: host code (C via the system compiler, LLVM via llvmlite) and, later, device
code (CUDA, OpenCL, Metal, SPIR-V).

The host-codegen interface is one function per target kind, registered here:

    codegen_host(mod: IRModule, target: Target, workdir: str) -> HostArtifact

Its input is an IRModule after the host passes of `compiler.build` (make_packed_api,
lower_call_packed, lower_workspace, lower_intrin, annotate_entry); the exact shape of that
"packed form" is the contract stated in `compiler/tir/transform/make_packed_api.py`. The
generator writes one position-independent relocatable object (`.o`) under `workdir` (a fresh
directory the caller owns) and returns its path together with the text it generated, by format:
{"c": ...} for the C target, {"ll": ..., "asm": ...} for LLVM. `compiler.build` links the object
into a shared library and loads it; `export_library` reuses the object for `.o`, `.tar` and `.a`.

Symbols the object must define, for every PrimFunc `f` with attr global_symbol `g`:
- `__tvm_ffi_<g>`: the safe-call function `int (void*, const TVMFFIAny*, int32_t, TVMFFIAny*)`;
- a weak `__tvm_ffi_main` forwarding to the function whose attr "tir.is_entry_func" is true
  (annotate_entry sets it when the module has exactly one function);
- `__tvm_ffi__library_ctx`: a `void*` the loader fills (a definition; weak is fine).
Outside system-lib mode runtime services are reached through weak `void*` context slots that
the loader fills after dlopen (`__TVMBackendAllocWorkspace`, `__TVMBackendFreeWorkspace`,
`__TVMBackendParallelLaunch`, `__TVMBackendParallelBarrier`, `__TVMFFIFunctionCall`,
`__TVMFFIEnvModLookupFromImports`, `__TVMFFIHandleInitOnce`): both Apache TVM's loader and the
microruntime fill them, so the .so loads in either; `tir.call_packed` fills its call site's
handle once with `TVMFFIHandleInitOnce(&handle, init)`, where `init` runs
`TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, out)` (thread-safe when the call
sits in a parallel loop, as TVM's LLVM codegen), and calls it with `TVMFFIFunctionCall`, all
through those slots (in C, then through weak direct references).
`TVMFFIErrorSetRaisedFromCStrParts` is a direct (undefined) reference, since both export it
globally. In system-lib mode (module attr "system_lib_prefix" present, a
str, maybe empty) every service is a direct call, and the object also registers each
`__tvm_ffi_<g>` plus `<prefix>__tvm_ffi__library_ctx` through
`TVMFFIEnvModRegisterSystemLibSymbol` from a constructor, and defines the idempotent entry
`int kiln_system_lib_<prefix>register(void)` (see `system_lib_entry_symbol`).
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable, Dict, Union

from ..ir.errors import TargetError

__all__ = ["HostArtifact", "LazySources", "codegen_host", "register_host_codegen",
           "host_codegen_available", "system_lib_entry_symbol"]


class LazySources(Mapping):
    """fmt -> generated text, where a text may be given as a function that makes it: it runs
    on first access (the assembly of a large module takes seconds to print and is rarely
    read), and its result is kept."""

    def __init__(self, items: Dict[str, Union[str, Callable[[], str]]]):
        self._items = dict(items)

    def __getitem__(self, fmt: str) -> str:
        value = self._items[fmt]
        if callable(value):
            value = self._items[fmt] = value()
        return value

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class HostArtifact:
    object_file: str                       # path of a position-independent relocatable .o
    sources: Mapping = field(default_factory=dict)  # fmt -> generated text (or LazySources)


HostCodegen = Callable[..., HostArtifact]

# kind -> module implementing `codegen_host(mod, target, workdir)`; imported on first use so a
# missing optional dependency (llvmlite) only matters for the target that needs it.
_HOST_CODEGENS: Dict[str, str] = {
    "c": "compiler.codegen.c_family.c",
    "llvm": "compiler.codegen.llvm",
}
_LOADED: Dict[str, HostCodegen] = {}


def register_host_codegen(kind: str, fn: HostCodegen) -> None:
    """Registers (or replaces) the host codegen of a target kind."""
    _LOADED[kind] = fn


def _load(kind: str) -> HostCodegen:
    if kind in _LOADED:
        return _LOADED[kind]
    module_name = _HOST_CODEGENS.get(kind)
    if module_name is None:
        raise TargetError(f"target kind {kind!r} cannot generate host code; host code is "
                          f"generated for {sorted(_HOST_CODEGENS)}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        if err.name not in (module_name, "llvmlite") and not module_name.endswith(str(err.name)):
            raise
        raise TargetError(f"target {kind!r} is not available in this build: {module_name} "
                          f"cannot be imported ({err}); install llvmlite with "
                          "pip install 'kiln[compiler]', or use target 'c'") from err
    _LOADED[kind] = module.codegen_host
    return _LOADED[kind]


def host_codegen_available(kind: str) -> bool:
    """Whether a host codegen for `kind` exists and imports."""
    try:
        _load(kind)
    except TargetError:
        return False
    return True


def codegen_host(mod, target, workdir: str) -> HostArtifact:
    """Generates and compiles host code for `mod` (packed form) on `target` into `workdir`."""
    return _load(target.kind.name)(mod, target, workdir)


def system_lib_entry_symbol(prefix: str) -> str:
    """The explicit entry an app calls to pull a system-lib object into a static link:
    `kiln_system_lib_<prefix>register` (`kiln_system_lib_register` for the empty prefix)."""
    return f"kiln_system_lib_{prefix}register"
