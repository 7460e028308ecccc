"""The kernel library of a model: its lowered kernels compiled, for each back end alike.

For a GPU device target, the kernels that run on the host CPU — those legalize scheduled there
(attr HOST_FALLBACK: nothing to spread over GPU threads) and the VM's shape functions (attr
tir.is_host_func) — are compiled for the host target (`target_host`, else the device target's
host, else "llvm"), the others for the device; for a CPU target (None: the default one) all
of them, `target_host` being its host."""
from __future__ import annotations

from typing import Mapping, Optional

from ...build import build_lowered
from ...ir.module import IRModule
from ...target import Target
from ...tir.function import PrimFunc
from ..transform.legalize_gpu import HOST_FALLBACK

# attr of the VM's shape functions: they read and write the shape heap, so run on the host CPU
HOST_FUNC = "tir.is_host_func"


def runs_on_host(func: PrimFunc) -> bool:
    """Whether a kernel of a GPU build runs on the host CPU."""
    return bool(func.attrs.get(HOST_FALLBACK) or func.attrs.get(HOST_FUNC))


def compile_kernels(funcs: Mapping[str, PrimFunc], device: Optional[Target] = None,
                    target_host=None):
    """`funcs` compiled into one library (a RuntimeModule), as the module docstring says."""
    if device is None or device.kind.is_host:
        return build_lowered({device: IRModule(dict(funcs))}, target_host=target_host)
    host = Target(target_host) if target_host is not None else device.host or Target("llvm")
    on_host = {k: f for k, f in funcs.items() if runs_on_host(f)}
    parts = {device: IRModule({k: f for k, f in funcs.items() if k not in on_host})}
    if on_host:
        parts[host] = IRModule(on_host)
    return build_lowered(parts, target_host=host)


__all__ = ["HOST_FUNC", "compile_kernels", "runs_on_host"]
