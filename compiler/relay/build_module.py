"""`relay.build`: a whole model (a graph-level IRModule) → a graph executor factory module.

    lib = compiler.relay.build(mod, target="llvm", params=params)
    gmod = graph_executor.GraphModule(lib["default"](dev))   # or export_library("model.so")

The graph-level pipeline is this flat list; each pass is one file in compiler/relax/transform.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from microruntime.abi import DeviceType

from ..build import build_lowered
from ..build_jobs import collector_paced_for_builds
from ..ir.errors import IRError
from ..ir.module import IRModule
from ..relax import expr as X
from ..relax.backend.graph_executor_codegen import GraphPlan, codegen
from ..relax.transform import (
    bind_params,
    eliminate_dead_code,
    fold_batch_norm,
    fold_constant,
    fuse_ops,
)
from ..relax.transform.convert_layout_nchwc import convert_layout_nchwc
from ..relax.transform.legalize import HOST_FALLBACK, legalize
from ..relax.transform.transpose_dense_weight import transpose_dense_weight
from ..relax.transform.winograd_conv2d import winograd_conv2d
from ..target import Target
from ..tir.function import PrimFunc
from .executor_factory import GraphExecutorFactoryModule


def optimize(mod: IRModule, params: Optional[Mapping[str, Any]] = None,
             target=None) -> IRModule:
    """The graph-level passes before kernels are made for `target` (None: a CPU): weights
    bound and folded, fused."""
    mod = bind_params(mod, params or {})     # weights become constants
    mod = fold_constant(mod)                 # constant subgraphs computed now
    mod = fold_batch_norm(mod)               # batch norms into scale/shift, then into weights
    mod = eliminate_dead_code(mod)           # what folding left unused
    mod = transpose_dense_weight(mod)        # dense by a constant W -> matmul by W.T [K, N]
    mod = convert_layout_nchwc(mod, target)  # CPU: conv regions in NCHW[x]c, weights blocked
    mod = winograd_conv2d(mod, target)       # CPU: 3x3 stride-1 convs by Winograd
    return fuse_ops(mod)                     # operators grouped into kernels


def plan(mod: IRModule, params: Optional[Mapping[str, Any]] = None,
         progress: Optional[Callable[[int, int, str], None]] = None, target=None) -> tuple:
    """The lowered module (kernels as PrimFuncs) and the graph plan (JSON, params, manifest,
    memory plan) of a model: what `build` compiles, for inspection and tests.
    `progress(k, total, name)` is called as each kernel is lowered (see `legalize`); `target`
    (None: a CPU) picks the kernels' schedules (topi.cuda for a GPU target)."""
    device, _ = split_targets(target)
    mod = legalize(optimize(_as_module(mod), params, device), progress=progress,
                   target=device)
    graph = codegen(mod["main"], kernel_devices(mod, device))
    return mod, graph


def kernel_devices(mod: IRModule, device) -> Optional[Dict[str, int]]:
    """DLPack device type of each kernel of a legalized module for a GPU target `device` (the
    host-fallback kernels on the CPU); None for a CPU build."""
    if device is None or device.kind.is_host:
        return None
    return {name: DeviceType.CPU if f.attrs.get(HOST_FALLBACK) else device.device_type
            for name, f in mod.items() if isinstance(f, PrimFunc)}


def split_targets(target, target_host=None):
    """(the kernels' target, the host target) of `target` as relay.build takes it: a str or
    Target ("opencl", "llvm -mcpu=..."), or a dict {kind or Target: ...} naming at most one
    device target and at most one CPU target, as TVM's heterogeneous form. A device target's
    host is `target_host`, else the dict's CPU target, else its own host (None: the default
    CPU). A CPU target is its own host."""
    if target is None:
        return None, target_host
    if isinstance(target, dict):
        tgts = [Target(k if isinstance(k, Target) or not isinstance(v, (str, Target)) else v)
                for k, v in target.items()]
        devices = [t for t in tgts if not t.kind.is_host]
        hosts = [t for t in tgts if t.kind.is_host]
        if len(devices) > 1 or len(hosts) > 1:
            raise IRError(f"relay.build: target {target!r} names {len(devices)} device and "
                          f"{len(hosts)} CPU targets; give at most one of each")
        if not devices:
            return hosts[0] if hosts else None, target_host
        host = target_host if target_host is not None else (hosts[0] if hosts else None)
        target = devices[0]
    else:
        target = Target(target)
        host = target_host
    if target.kind.is_host:
        return target, target_host
    host = Target(host) if host is not None else target.host
    return (target.with_host(host) if host is not None else target), host


def build(ir_mod, target=None, target_host=None, params=None, mod_name: str = "default"):
    """Compiles the model's `main` for the graph executor: a GraphExecutorFactoryModule holding
    the kernel library, the graph JSON and the params. `target` "opencl" (or "cuda", ...) with
    `target_host` "llvm" (or `{"opencl": ..., "llvm": ...}`) makes GPU kernels launched from
    host code; the executor then runs on that device (`lib["default"](microruntime.opencl())`)."""
    device, host = split_targets(target, target_host)
    with collector_paced_for_builds():
        return build_from_plan(*plan(ir_mod, params, target=device), target=device,
                               target_host=host, mod_name=mod_name)


def build_from_plan(mod: IRModule, graph: GraphPlan, target=None, target_host=None,
                    mod_name: str = "default"):
    """`build` from the result of `plan(mod, params, target=target)`: compiles its kernels,
    without planning again (a caller that reports the plan builds from it)."""
    tgt, target_host = split_targets(target, target_host)
    on_host = [k for k in graph.kernels if mod[k].attrs.get(HOST_FALLBACK)]
    kernels = IRModule({k: mod[k] for k in graph.kernels if k not in on_host})
    if on_host and tgt is not None and not tgt.kind.is_host:
        host = Target(target_host) if target_host is not None else \
            (tgt.host or Target("llvm"))
        lib = build_lowered({tgt: kernels, host: IRModule({k: mod[k] for k in on_host})},
                            target_host=host)
    else:
        lib = build_lowered({tgt: kernels}, target_host=target_host)
    return GraphExecutorFactoryModule(graph.graph_json, lib, graph.params,
                                      libmod_name=mod_name)


def _as_module(mod) -> IRModule:
    if isinstance(mod, X.Function):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule) or "main" not in mod:
        raise IRError("relay.build needs an IRModule with a graph-level function 'main' (or "
                      f"that Function), got {type(mod).__name__}")
    return mod


__all__ = ["build", "build_from_plan", "optimize", "plan", "split_targets", "GraphPlan"]
