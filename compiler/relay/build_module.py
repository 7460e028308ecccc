"""`relay.build`: a whole model (a graph-level IRModule) → a graph executor factory module, or
with `executor=Executor("aot")` an AOT executor factory module.

    lib = compiler.relay.build(mod, target="llvm", params=params)
    gmod = graph_executor.GraphModule(lib["default"](dev))   # or export_library("model.so")
    lib = compiler.relay.build(mod, target="c", params=params, executor=Executor("aot"))
    aot = aot_executor.AotModule(lib["default"](dev))      # or export_library("model.a")

The graph-level passes are those of compiler/relax/pipeline.py (shared with `relax.build`);
then the graph back end plans memory and writes the graph JSON
(compiler/relax/backend/graph/codegen.py), from which the AOT back end
(compiler/relax/backend/aot) generates its run function.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from microruntime.abi import DeviceType

from ..build_jobs import collector_paced_for_builds
from ..ir.errors import IRError, UnsupportedOpError
from ..ir.module import IRModule
from ..relax import expr as X
from ..relax import pipeline
from ..relax.backend.aot.build import build_aot, cpu_target
from ..relax.backend.graph.codegen import GraphPlan, codegen
from ..relax.backend.graph.linked_params import link_params as link_params_into
from ..relax.backend.graph.linked_params import wants_link_params
from ..relax.backend.kernel_library import compile_kernels, runs_on_host
from ..relax.shape_util import bind_shapes_message
from ..target import split_targets
from ..tir.function import PrimFunc
from .backend import Executor, Runtime, apply_runtime, as_executor
from .executor_factory import GraphExecutorFactoryModule


def optimize(mod: IRModule, params: Optional[Mapping[str, Any]] = None,
             target=None, weights_at_load: bool = False) -> IRModule:
    """The graph-level passes before kernels are made for `target` (None: a CPU): weights
    bound and folded, fused (compiler/relax/pipeline.py `optimize_passes`; `weights_at_load`
    as there)."""
    return pipeline.run(_as_module(mod),
                        pipeline.optimize_passes(target, params, weights_at_load))


def plan(mod: IRModule, params: Optional[Mapping[str, Any]] = None,
         progress: Optional[Callable[[int, int, str], None]] = None, target=None,
         executor: str = "graph") -> tuple:
    """The lowered module (kernels as PrimFuncs) and the graph plan (JSON, params, manifest,
    memory plan) of a model: what `build` compiles, for inspection and tests.
    `progress(k, total, name)` is called as each kernel is lowered (see `legalize`); `target`
    (None: a CPU) picks the kernels' schedules (topi.cuda for a GPU target); `executor` (the
    name of the one the plan is for) words the error of a model with control flow. For the
    graph executor, Winograd weights are transformed at load (a kernel the executor runs
    once), not stored transformed."""
    device, _ = split_targets(target)
    mod = optimize(mod, params, device, weights_at_load=executor == "graph")
    flow = control_flow(mod)
    if flow is not None:
        raise UnsupportedOpError(
            f"the {executor} executor runs one sequence of kernels, but this model has {flow}; "
            "build it for the Relax VM: ex = compiler.relax.build(mod, target, params=params), "
            "then microruntime.relax_vm.VirtualMachine(ex, dev) (or `python -m compiler "
            "compile`, which does so for such a model)")
    unbound = bind_shapes_message(mod["main"].params)
    if unbound:
        raise IRError(unbound)
    mod = pipeline.run(mod, pipeline.kernel_passes(device, progress))
    graph = codegen(mod["main"], kernel_devices(mod, device))
    return mod, graph


def control_flow(mod: IRModule) -> Optional[str]:
    """What of `mod` only the Relax VM runs, in words ("an If in 'main'", "function 'f'"),
    or None: an If (a run-time condition: one known while compiling is folded), or a
    graph-level function other than `main` (a loop body, a called function)."""
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive") and name != "main":
            return f"a graph-level function '{name}' besides 'main' (a loop or a call)"
    main = mod["main"]
    for block in main.body.blocks:
        for b in block.bindings:
            if isinstance(b.value, X.If):
                return "an If on a run-time condition in 'main'"
    return None


def kernel_devices(mod: IRModule, device) -> Optional[Dict[str, int]]:
    """DLPack device type of each kernel of a legalized module for a GPU target `device` (the
    host-fallback kernels on the CPU); None for a CPU build."""
    if device is None or device.kind.is_host:
        return None
    return {name: DeviceType.CPU if runs_on_host(f) else device.device_type
            for name, f in mod.items() if isinstance(f, PrimFunc)}


def build(ir_mod, target=None, target_host=None, params=None, mod_name: str = "default",
          executor=None, runtime=None):
    """Compiles the model's `main` for the graph executor: a GraphExecutorFactoryModule holding
    the kernel library, the graph JSON and the params. `target` "opencl" (or "cuda", ...) with
    `target_host` "llvm" (or `{"opencl": ..., "llvm": ...}`) makes GPU kernels launched from
    host code; the executor then runs on that device (`lib["default"](microruntime.opencl())`).
    `executor=Executor("aot")` (CPU targets) gives an AOTExecutorFactoryModule instead: one
    generated run function `tvmgen_<mod_name>_run`, its header and the weights as constant
    data (compiler/relax/backend/aot). `runtime=Runtime("crt", {"system-lib": True})` adds
    `--system-lib` to the target (a static library, `export_library("model.a")`)."""
    executor = as_executor(executor)
    if executor.name == "aot":
        tgt = apply_runtime(cpu_target(target, target_host), runtime)
        with collector_paced_for_builds():
            lowered, graph = plan(ir_mod, params, target=tgt, executor="AOT")
            return build_aot(lowered, graph, tgt, mod_name=mod_name)
    device, host = split_targets(target, target_host)
    device = apply_runtime(device, runtime)
    with collector_paced_for_builds():
        return build_from_plan(*plan(ir_mod, params, target=device), target=device,
                               target_host=host, mod_name=mod_name,
                               link_params=executor["link-params"])


def build_from_plan(mod: IRModule, graph: GraphPlan, target=None, target_host=None,
                    mod_name: str = "default", link_params: Optional[bool] = None):
    """`build` from the result of `plan(mod, params, target=target)`: compiles its kernels,
    without planning again (a caller that reports the plan builds from it). `link_params`
    (None: by the target, see compiler/relax/backend/graph/linked_params.py) puts the weights
    in the kernel library as constant data, not in the factory's payload."""
    tgt, target_host = split_targets(target, target_host)
    lib = compile_kernels({k: mod[k] for k in graph.kernels}, tgt, target_host)
    linked = []
    if graph.params and wants_link_params(link_params, tgt):
        lib = link_params_into(graph, lib, tgt)
        linked = list(graph.params)
    return GraphExecutorFactoryModule(graph.graph_json, lib, graph.params,
                                      libmod_name=mod_name, linked_params=linked)


def _as_module(mod) -> IRModule:
    if isinstance(mod, X.Function):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule) or "main" not in mod:
        raise IRError("relay.build needs an IRModule with a graph-level function 'main' (or "
                      f"that Function), got {type(mod).__name__}")
    return mod


__all__ = ["build", "build_from_plan", "control_flow", "optimize", "plan", "split_targets",
           "Executor", "GraphPlan", "Runtime"]
