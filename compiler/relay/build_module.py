"""`relay.build`: a whole model (a graph-level IRModule) → a graph executor factory module.

    lib = compiler.relay.build(mod, target="llvm", params=params)
    gmod = graph_executor.GraphModule(lib["default"](dev))   # or export_library("model.so")

The graph-level pipeline is this flat list; each pass is one file in compiler/relax/transform.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ..build import build as build_kernels
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
from ..relax.transform.legalize import legalize
from ..target import Target
from .executor_factory import GraphExecutorFactoryModule


def optimize(mod: IRModule, params: Optional[Mapping[str, Any]] = None) -> IRModule:
    """The graph-level passes before kernels are made: weights bound and folded, fused."""
    mod = bind_params(mod, params or {})     # weights become constants
    mod = fold_constant(mod)                 # constant subgraphs computed now
    mod = fold_batch_norm(mod)               # batch norms into scale/shift, then into weights
    mod = eliminate_dead_code(mod)           # what folding left unused
    return fuse_ops(mod)                     # operators grouped into kernels


def plan(mod: IRModule, params: Optional[Mapping[str, Any]] = None,
         progress: Optional[Callable[[int, int, str], None]] = None) -> tuple:
    """The lowered module (kernels as PrimFuncs) and the graph plan (JSON, params, manifest,
    memory plan) of a model: what `build` compiles, for inspection and tests.
    `progress(k, total, name)` is called as each kernel is lowered (see `legalize`)."""
    mod = legalize(optimize(_as_module(mod), params), progress=progress)
    graph = codegen(mod["main"])
    return mod, graph


def build(ir_mod, target=None, target_host=None, params=None, mod_name: str = "default"):
    """Compiles the model's `main` for the graph executor: a GraphExecutorFactoryModule holding
    the kernel library, the graph JSON and the params."""
    return build_from_plan(*plan(ir_mod, params), target=target, target_host=target_host,
                           mod_name=mod_name)


def build_from_plan(mod: IRModule, graph: GraphPlan, target=None, target_host=None,
                    mod_name: str = "default"):
    """`build` from the result of `plan(mod, params)`: compiles its kernels, without planning
    again (a caller that reports the plan builds from it)."""
    kernels = IRModule({k: mod[k] for k in graph.kernels})
    tgt = Target(target) if target is not None else None
    lib = build_kernels(kernels, target=tgt, target_host=target_host)
    return GraphExecutorFactoryModule(graph.graph_json, lib, graph.params,
                                      libmod_name=mod_name)


def _as_module(mod) -> IRModule:
    if isinstance(mod, X.Function):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule) or "main" not in mod:
        raise IRError("relay.build needs an IRModule with a graph-level function 'main' (or "
                      f"that Function), got {type(mod).__name__}")
    return mod


__all__ = ["build", "build_from_plan", "optimize", "plan", "GraphPlan"]
