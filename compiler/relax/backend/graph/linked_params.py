"""Link-params for the graph executor (TVM's `Executor("graph", {"link-params": True})`): the
weights become constant data of the kernel library (compiler/codegen/linked_params.py), looked
up by storage id, so the factory payload carries no copy of them and the runtime's executor
points each weight's slot at its data in place (no allocation, no copy: on a microcontroller
the weights stay in flash).

`link_params(graph, lib, target)` returns the library module: the linked params' object over
the kernel library, linked with it on export (and, for a host build, loaded with it now).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from typing import Dict

from ....codegen.linked_params import emit_linked_params, linked_param
from ....contrib import cc
from ....ir.errors import TargetError
from ....runtime_module import RuntimeModule
from ....target import Target
from ....target.triple import is_bare_metal
from .codegen import GraphPlan


def param_storage_ids(graph_json: str, names) -> Dict[str, int]:
    """The storage id of the graph entry of each input named in `names`."""
    g = json.loads(graph_json)
    sids = g["attrs"]["storage_id"][1]
    wanted = set(names)
    return {g["nodes"][nid]["name"]: sids[g["node_row_ptr"][nid]]
            for nid in g["arg_nodes"] if g["nodes"][nid]["name"] in wanted}


def wants_link_params(option, target: Target) -> bool:
    """Whether a graph build links its params: the executor's "link-params" when given, else
    the target's `-link-params`, else on for a bare-metal `-mtriple` with `--system-lib`."""
    if option is not None:
        return bool(option)
    if target is not None and target.get("link-params") is not None:
        return bool(target.get("link-params"))
    triple = target.get("mtriple") if target is not None else None
    return bool(target is not None and target.system_lib and triple and is_bare_metal(triple))


def _loaded(objects, workdir: str):
    import microruntime

    path = cc.create_shared(os.path.join(workdir, "linked.so"), objects,
                            options=cc.KERNEL_LIBRARY_OPTIONS)
    return microruntime.load_module(path)


def link_params(graph: GraphPlan, lib: RuntimeModule, target: Target) -> RuntimeModule:
    """The library of `lib`'s kernels with `graph`'s params linked in (see the module doc)."""
    if target is None or not target.kind.is_host:
        raise TargetError(f"link-params puts the weights in CPU memory; target {target} is not "
                          "a CPU: build it with link-params False")
    sids = param_storage_ids(graph.graph_json, graph.params)
    params = [linked_param(sids[name], value) for name, value in graph.params.items()]
    workdir = tempfile.mkdtemp(prefix="kiln_linked_")
    try:
        artifact = emit_linked_params(params, target, workdir)
        runtime = None
        if lib.runtime_module is not None:
            runtime = _loaded([artifact.object_file, lib.object_file], workdir)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    module = RuntimeModule(runtime, artifact, target, target.system_lib_prefix,
                           cross=lib.runtime_module is None)
    module.import_module(lib)   # linked with the params on export
    module.workspace_bytes = getattr(lib, "workspace_bytes", None)
    weakref.finalize(module, shutil.rmtree, workdir, True)
    return module


__all__ = ["link_params", "param_storage_ids", "wants_link_params"]
