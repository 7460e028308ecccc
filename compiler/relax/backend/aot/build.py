"""The AOT back end's driver: a legalized module and its graph plan (compiler.relay.plan) ->
the kernels compiled, the AOT plan made (plan.py) and the run file compiled beside them
(factory.py). CPU targets only ("llvm", "c"; "--system-lib" for a static library)."""
from __future__ import annotations

from typing import List, Optional

from ....codegen import host_codegen_available
from ....ir.errors import TargetError
from ....ir.module import IRModule
from ....target import Target, split_targets
from ..graph.codegen import GraphPlan
from ..kernel_library import compile_kernels
from .factory import AOTExecutorFactoryModule
from .plan import make_plan


def cpu_target(target=None, target_host=None) -> Target:
    """The CPU target of an AOT build (None: the current one, else the default); a GPU target
    is a TargetError."""
    device, host = split_targets(target, target_host)
    if device is not None and not device.kind.is_host:
        raise TargetError(f"the AOT executor runs on the CPU; target {device.kind.name!r} "
                          "needs the graph executor (executor='graph') or the VM")
    tgt = device or (Target(host) if host is not None else Target.current())
    return tgt or Target("llvm" if host_codegen_available("llvm") else "c")


def build_aot(mod: IRModule, graph: GraphPlan, target=None, target_host=None,
              mod_name: str = "default", output_names: Optional[List[str]] = None
              ) -> AOTExecutorFactoryModule:
    """The AOTExecutorFactoryModule of `mod` (kernels as PrimFuncs) and its graph plan."""
    tgt = cpu_target(target, target_host)
    lib = compile_kernels({k: mod[k] for k in graph.kernels}, tgt)
    if lib.runtime_module is None and tgt.kind.name != "c":
        raise TargetError(f"the AOT executor's run function is C; for another architecture "
                          f"({tgt}) build with target 'c -mtriple=...' and export with "
                          "cc='<triple>-gcc'")
    plan = make_plan(graph, mod_name, getattr(lib, "workspace_bytes", 0) or 0, output_names)
    return AOTExecutorFactoryModule(plan, lib, tgt)


__all__ = ["build_aot", "cpu_target"]
