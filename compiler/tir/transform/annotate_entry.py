"""annotate_entry: mark the module's entry function.

Before: any IRModule.
After: when the module has exactly one PrimFunc (device kernels of a GPU build not counted),
that function has attr "tir.is_entry_func" = True (codegens then emit a weak `__tvm_ffi_main`
forwarding to it, so `mod["main"]` works as in TVM); with several functions no function is
marked (TVM does the same: `__tvm_ffi_main` is absent from multi-function modules). A function whose
global_symbol is "main" is not marked: its own symbol is already `__tvm_ffi_main`.
"""
from __future__ import annotations

from ...ir import IRModule


def annotate_entry(mod: IRModule) -> IRModule:
    host = [(n, f) for n, f in mod.items() if f.attrs.get("calling_conv") != "device_kernel"]
    if len(host) != 1:
        return mod
    (name, func), = host
    if func.attrs.get("tir.is_entry_func") or func.attrs.get("global_symbol", name) == "main":
        return mod
    return mod.with_functions({**dict(mod.items()), name: func.with_attr("tir.is_entry_func",
                                                                          True)})
