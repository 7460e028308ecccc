"""The AOT executor's plan: where each tensor of a model lives and the kernel calls in order,
from the graph back end's result (graph/codegen.py's GraphPlan, its storage from
graph/plan_memory.py), so both executors run one pipeline and one memory plan.

A tensor (an entry of the graph) lives
- in the caller's input buffer (`inputs-><name>`), or in the caller's output buffer when a
  kernel writes it and it is an output of the model (the first time it is one);
- in the weights, linked in as constant data (`Param`);
- else in the workspace: the planned storage slot of its entry, at a 64-byte aligned offset;
  slots only held by tensors that live elsewhere take no workspace.
The workspace ends with the kernels' own workspace (the most one kernel call holds), which the
run function hands to the runtime while it runs. An output that no kernel writes (an input, a
weight, an output twice) is copied into the caller's buffer after the last call.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from ....codegen.c_family.reserved import is_reserved
from ....ir.dtype import as_dtype
from ....ir.errors import IRError
from ..graph.codegen import GraphPlan

ALIGNMENT = 64     # bytes: kernels may assume their buffers are this aligned


@dataclass(frozen=True)
class Port:
    """An input or output of the model: its name, C identifier, shape, dtype and bytes."""
    name: str
    c_name: str
    shape: Tuple[int, ...]
    dtype: str
    nbytes: int
    entry: int


@dataclass(frozen=True)
class Tensor:
    """A tensor the kernels read or write: shape, dtype, and where it lives: ("input", k),
    ("output", k), ("param", name) or ("workspace", byte offset)."""
    shape: Tuple[int, ...]
    dtype: str
    nbytes: int
    home: Tuple[str, object]


@dataclass(frozen=True)
class Call:
    kernel: str
    args: Tuple[int, ...]       # tensor indices: inputs, then outputs


@dataclass
class AotPlan:
    mod_name: str
    inputs: List[Port]
    outputs: List[Port]
    params: Dict[str, np.ndarray]
    tensors: List[Tensor]
    calls: List[Call]
    copies: List[Tuple[int, int]]     # (output index, tensor index) copied after the calls
    slots_bytes: int                  # the workspace's tensors
    kernel_workspace_bytes: int       # then the kernels' own workspace

    @property
    def workspace_bytes(self) -> int:
        return self.slots_bytes + aligned(self.kernel_workspace_bytes)

    @property
    def kernels(self) -> List[str]:
        return list(dict.fromkeys(c.kernel for c in self.calls))

    def metadata(self) -> dict:
        """What an executor over the run function needs: inputs and outputs (name, shape,
        dtype, bytes) and the workspace's bytes."""
        def port(p: Port) -> dict:
            return {"name": p.name, "shape": list(p.shape), "dtype": p.dtype,
                    "nbytes": p.nbytes}
        return {"module_name": self.mod_name, "inputs": [port(p) for p in self.inputs],
                "outputs": [port(p) for p in self.outputs],
                "workspace_bytes": self.workspace_bytes,
                "kernel_workspace_bytes": self.kernel_workspace_bytes,
                "alignment": ALIGNMENT}


def aligned(n: int) -> int:
    return -(-int(n) // ALIGNMENT) * ALIGNMENT


def _nbytes(shape, dtype: str) -> int:
    dt = as_dtype(dtype)
    return int(np.prod(shape, dtype=np.int64)) * ((dt.bits * dt.lanes + 7) // 8)


def check_mod_name(mod_name: str) -> str:
    """`mod_name` when it makes C identifiers (tvmgen_<mod_name>_run), else an IRError."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", mod_name or ""):
        raise IRError(f"mod_name {mod_name!r} must be a C identifier (letters, digits, '_'): "
                      "the AOT executor names its functions tvmgen_<mod_name>_run")
    return mod_name


def c_names(names: List[str], what: str) -> List[str]:
    """C identifiers for `names` (TVM's sanitizing: other characters become '_'), distinct
    also in upper case (the size macros); an IRError names two that collide."""
    out: List[str] = []
    seen: Dict[str, str] = {}
    for name in names:
        c = re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"
        if c[0].isdigit():
            c = "_" + c
        if is_reserved(c):
            c = c + "_"
        if c.upper() in seen:
            raise IRError(f"{what} {name!r} and {seen[c.upper()]!r} give one C name {c!r} in "
                          f"the AOT executor's header; rename one of them")
        seen[c.upper()] = name
        out.append(c)
    return out


def make_plan(graph: GraphPlan, mod_name: str = "default", kernel_workspace_bytes: int = 0,
              output_names: Optional[List[str]] = None) -> AotPlan:
    """The AOT plan of a graph plan (see the module doc)."""
    check_mod_name(mod_name)
    g = json.loads(graph.graph_json)
    if "device_index" in g["attrs"]:
        raise IRError("the AOT executor runs on the CPU; this graph places kernels on several "
                      "devices: build it for the graph executor (executor='graph')")
    nodes, row_ptr = g["nodes"], g["node_row_ptr"]
    shapes, dtypes = g["attrs"]["shape"][1], g["attrs"]["dltype"][1]
    storage = g["attrs"]["storage_id"][1]
    homes: Dict[int, Tuple[str, object]] = {}
    input_nodes = [nid for nid in g["arg_nodes"] if nodes[nid]["name"] not in graph.params]
    in_names = [nodes[nid]["name"] for nid in input_nodes]
    inputs = []
    for k, (nid, c) in enumerate(zip(input_nodes, c_names(in_names, "input"))):
        e = row_ptr[nid]
        homes[e] = ("input", k)
        inputs.append(Port(nodes[nid]["name"], c, tuple(shapes[e]), dtypes[e],
                           _nbytes(shapes[e], dtypes[e]), e))
    for nid in g["arg_nodes"]:
        if nodes[nid]["name"] in graph.params:
            homes[row_ptr[nid]] = ("param", nodes[nid]["name"])
    heads = [row_ptr[nid] + idx for nid, idx, *_ in g["heads"]]
    if output_names is None or len(output_names) != len(heads):
        output_names = ["output"] if len(heads) == 1 else [f"output{k}" for k in
                                                          range(len(heads))]
    outputs, copies = [], []
    for k, (e, c) in enumerate(zip(heads, c_names(output_names, "output"))):
        outputs.append(Port(output_names[k], c, tuple(shapes[e]), dtypes[e],
                            _nbytes(shapes[e], dtypes[e]), e))
        if e in homes:
            copies.append((k, e))
        else:
            homes[e] = ("output", k)
    calls = []
    for nid, node in enumerate(nodes):
        if node["op"] != "tvm_op":
            continue
        outs = [row_ptr[nid] + i for i in range(row_ptr[nid + 1] - row_ptr[nid])]
        ins = [row_ptr[i] + j for i, j, *_ in node["inputs"]]
        calls.append(Call(node["attrs"]["func_name"], tuple(ins + outs)))
    slot_bytes: Dict[int, int] = {}
    for e in range(len(shapes)):
        if e not in homes:
            slot_bytes[storage[e]] = max(slot_bytes.get(storage[e], 0),
                                         _nbytes(shapes[e], dtypes[e]))
    offsets, total = {}, 0
    for sid in sorted(slot_bytes):
        offsets[sid] = total
        total += aligned(slot_bytes[sid])
    tensors = [Tensor(tuple(shapes[e]), dtypes[e], _nbytes(shapes[e], dtypes[e]),
                      homes.get(e, ("workspace", offsets.get(storage[e]))))
               for e in range(len(shapes))]
    return AotPlan(mod_name, inputs, outputs, dict(graph.params), tensors, calls, copies,
                   total, int(kernel_workspace_bytes))


__all__ = ["ALIGNMENT", "AotPlan", "Call", "Port", "Tensor", "aligned", "c_names",
           "check_mod_name", "make_plan"]
