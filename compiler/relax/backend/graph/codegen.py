"""The graph executor back end: a lowered `main` → TVM's classic graph JSON, params, manifest.

Input: `main` after legalization — bindings `v = R.call_tir(kernel, (args...), out_sinfo)`
(a tuple-valued out_sinfo for kernels with several outputs), `v = t[i]` of such a tuple, and a
result that is a variable or a tuple of them; every shape static. Output (`GraphPlan`):
- the graph JSON (nodes "null" for inputs and weights, "tvm_op" per kernel call; `heads`,
  `arg_nodes`, `node_row_ptr`, and the attrs shape / dltype / storage_id), with storage slots
  from `plan_memory`;
- params: every non-scalar constant as a weight named p0, p1, ... (TVM's naming), constants
  of equal contents (dtype, shape and bytes) as one weight;
- a kernel that reads weights alone (a weight transformed at load: winograd_conv2d's
  `at_load`) writes slots of its own, so its outputs hold until the weights change: the
  runtime's graph executor runs it only then (another executor, every run);
- input names the runtime cannot read (too long, or holding a NUL) are an IRError naming the
  input (backend/names.py);
- the kernels the graph calls, and the memory figures (planned slots against the sum of every
  kernel output) that show what planning saved.
The manifest the runtime checks at load is derived from the graph JSON by
compiler.relay.executor_factory.make_manifest.

Heterogeneous graphs (`kernel_devices`: kernel name -> DLPack device type, when the kernels do
not all run on one device, or some run on the CPU of a GPU build: kernels that cannot run on
GPU threads stay on the host): each entry gets the device of the kernel that writes it, an
input or weight the device of its first reader; a kernel reading an entry of another device
reads a copy made by a `__copy` node (one per entry and device), and attrs gain
`device_index` (TVM's layout).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from ....ir.dtype import as_dtype
from ....ir.errors import IRError
from ... import expr as X
from ...shape_util import bind_shapes_message
from ...struct_info import TensorStructInfo, TupleStructInfo
from ..names import check_input_name, short_kernel_name
from .plan_memory import MemoryPlan, Step, plan_memory

Entry = Tuple[int, int]   # (node id, output index)
_CPU = 1                  # DLPack's kDLCPU


@dataclass
class GraphPlan:
    graph_json: str
    params: Dict[str, np.ndarray]
    kernels: List[str]        # distinct, in first-call order
    memory: MemoryPlan
    intermediate_bytes: int   # the sum of every kernel output's size, without reuse
    planned_bytes: int        # the slots kernel outputs were given, with reuse

    @property
    def num_kernels(self) -> int:
        return len(self.kernels)


def _tensor(sinfo, where: str) -> TensorStructInfo:
    if not (isinstance(sinfo, TensorStructInfo) and sinfo.is_static and sinfo.dtype != "void"):
        raise IRError(f"graph executor: {where} has struct info {sinfo}; the graph executor "
                      "needs tensors of static shape and known dtype (build symbolic shapes "
                      "for the VM with relax.build)")
    return sinfo


def _content_key(a: np.ndarray) -> tuple:
    return (str(a.dtype), a.shape, hashlib.sha1(np.ascontiguousarray(a).tobytes()).digest())


def _same_constant(by_content, data: np.ndarray) -> Optional[Entry]:
    """The entry of a weight already in the params with the contents of `data` (equal bytes,
    dtype and shape), if any: a model never stores one weight twice."""
    for other, entry in by_content.get(_content_key(data), ()):
        if np.array_equal(other, data):
            return entry
    return None


def _nbytes(s: TensorStructInfo) -> int:
    dt = as_dtype(s.dtype)
    return int(np.prod(s.shape, dtype=np.int64)) * ((dt.bits * dt.lanes + 7) // 8)


class _Graph:
    def __init__(self):
        self.nodes: List[dict] = []
        self.shapes: List[List[int]] = []     # per entry, in node order
        self.dtypes: List[str] = []
        self.row_ptr: List[int] = [0]
        self.arg_nodes: List[int] = []
        self.entry_info: Dict[Entry, TensorStructInfo] = {}

    def add(self, node: dict, outs: List[TensorStructInfo]) -> int:
        nid = len(self.nodes)
        self.nodes.append(node)
        for i, s in enumerate(outs):
            self.shapes.append([int(d) for d in s.shape])
            self.dtypes.append(s.dtype)
            self.entry_info[(nid, i)] = s
        self.row_ptr.append(self.row_ptr[-1] + len(outs))
        if node["op"] == "null":
            self.arg_nodes.append(nid)
        return nid


def _plan_per_device(steps, sizes, pinned, heads, device) -> MemoryPlan:
    """plan_memory run for each device's entries apart, so no slot mixes devices."""
    storage: Dict[Entry, int] = {}
    slots: List[int] = []
    first = next(iter(device.values()))
    for dev in sorted(set(device.values())):
        mine = {e for e in sizes if device.get(e, first) == dev}
        part = plan_memory([Step([e for e in st.reads if e in mine],
                                 [e for e in st.writes if e in mine]) for st in steps],
                           {e: n for e, n in sizes.items() if e in mine},
                           [e for e in pinned if e in mine], [e for e in heads if e in mine])
        for e, sid in part.storage_id.items():
            storage[e] = sid + len(slots)
        slots += part.slot_bytes
    return MemoryPlan(storage, slots)


def codegen(main: X.Function, kernel_devices: Optional[Dict[str, int]] = None) -> GraphPlan:
    hetero = kernel_devices is not None and (len(set(kernel_devices.values())) > 1 or
                                             _CPU in kernel_devices.values())
    unbound = bind_shapes_message(main.params)
    if unbound:
        raise IRError(unbound)
    g = _Graph()
    entries: Dict[int, object] = {}    # id(var) -> Entry or list of Entries (a tuple)
    params: Dict[str, np.ndarray] = {}
    const_entry: Dict[int, Entry] = {}
    for p in main.params:
        check_input_name(p.name_hint)
        s = _tensor(p.struct_info, f"input {p.name_hint!r}")
        entries[id(p)] = (g.add({"op": "null", "name": p.name_hint, "inputs": []}, [s]), 0)

    by_content: Dict[tuple, List[Tuple[np.ndarray, Entry]]] = {}

    def entry_of(e: X.Expr, where: str):
        if isinstance(e, X.Constant):
            got = const_entry.get(id(e))
            if got is None:
                got = _same_constant(by_content, e.data)
                if got is not None:
                    const_entry[id(e)] = got
            if got is None:
                name = f"p{len(params)}"
                params[name] = e.data
                s = _tensor(e.struct_info, f"constant {name}")
                got = const_entry[id(e)] = (g.add({"op": "null", "name": name, "inputs": []},
                                                  [s]), 0)
                by_content.setdefault(_content_key(e.data), []).append((e.data, got))
            return got
        if isinstance(e, X.Var) and id(e) in entries:
            return entries[id(e)]
        if isinstance(e, X.Tuple):
            return [entry_of(f, where) for f in e.fields]
        raise IRError(f"graph executor: {where} uses {e!r}, which is not a tensor computed in "
                      "the graph (legalize the module first)")

    steps: List[Step] = []
    of_weights: List[Entry] = []        # outputs of kernels that read weights alone
    kernels: List[str] = []
    device: Dict[Entry, int] = {}       # heterogeneous: the device of each entry
    copies: Dict[Tuple[Entry, int], Entry] = {}

    def on_device(e: Entry, dev: int) -> Entry:
        """`e` where a kernel on `dev` can read it: itself, or its copy there."""
        if e not in device:
            device[e] = dev        # an input or weight: where its first reader runs
        if device[e] == dev:
            return e
        if (e, dev) not in copies:
            s = g.entry_info[e]
            name = short_kernel_name(f"__copy_{g.nodes[e[0]]['name']}")
            nid = g.add({"op": "tvm_op", "name": name,
                         "attrs": {"func_name": "__copy", "num_inputs": "1",
                                   "num_outputs": "1", "flatten_data": "0"},
                         "inputs": [[e[0], e[1], 0]]}, [s])
            copies[(e, dev)] = (nid, 0)
            device[(nid, 0)] = dev
            steps.append(Step(reads=[e], writes=[(nid, 0)]))
        return copies[(e, dev)]

    for block in main.body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, X.TupleGetItem):
                t = entry_of(v.tuple_value, b.var.name_hint)
                entries[id(b.var)] = t[v.index]
                continue
            if isinstance(v, (X.Var, X.Tuple, X.Constant)):
                entries[id(b.var)] = entry_of(v, b.var.name_hint)
                continue
            if not (isinstance(v, X.Call) and isinstance(v.op, X.Op)
                    and v.op.name == "relax.call_tir"):
                raise IRError(f"graph executor: binding {b.var.name_hint!r} is {v!r}; only "
                              "kernel calls (R.call_tir) run on the graph executor")
            kernel = v.args[0].name_hint
            ins = [entry_of(a, f"call of {kernel}") for a in v.args[1].fields]
            if any(isinstance(i, list) for i in ins):
                raise IRError(f"graph executor: {kernel} takes a tuple argument")
            if hetero:
                dev = kernel_devices[kernel]
                ins = [on_device(e, dev) for e in ins]
            out = v.sinfo_args[0]
            outs = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
            outs = [_tensor(s, f"output of {kernel}") for s in outs]
            nid = g.add({"op": "tvm_op", "name": kernel,
                         "attrs": {"func_name": kernel, "num_inputs": str(len(ins)),
                                   "num_outputs": str(len(outs)), "flatten_data": "0"},
                         "inputs": [[n, i, 0] for n, i in ins]}, outs)
            kernels.append(kernel)
            made = [(nid, i) for i in range(len(outs))]
            if hetero:
                for e in made:
                    device[e] = kernel_devices[kernel]
            entries[id(b.var)] = made if isinstance(out, TupleStructInfo) else made[0]
            steps.append(Step(reads=ins, writes=made))
            if v.args[1].fields and all(isinstance(a, X.Constant) for a in v.args[1].fields):
                of_weights += made
    heads = entry_of(main.body.body, "the result")
    heads = heads if isinstance(heads, list) else [heads]

    pinned = [(nid, 0) for nid in g.arg_nodes] + of_weights
    sizes = {e: _nbytes(s) for e, s in g.entry_info.items()}
    memory = _plan_per_device(steps, sizes, pinned, heads, device) if hetero else \
        plan_memory(steps, sizes, pinned, heads)
    entry_list = [(nid, i) for nid in range(len(g.nodes))
                  for i in range(g.row_ptr[nid + 1] - g.row_ptr[nid])]
    graph = {
        "nodes": g.nodes,
        "arg_nodes": g.arg_nodes,
        "heads": [[n, i, 0] for n, i in heads],
        "attrs": {
            "dltype": ["list_str", g.dtypes],
            "shape": ["list_shape", g.shapes],
            "storage_id": ["list_int", [memory.storage_id[e] for e in entry_list]],
        },
        "node_row_ptr": g.row_ptr,
    }
    if hetero:
        first = next(iter(kernel_devices.values()))
        graph["attrs"]["device_index"] = ["list_int", [device.get(e, first)
                                                       for e in entry_list]]
    written = [e for s in steps for e in s.writes]
    intermediate = sum(sizes[e] for e in written)
    planned = sum(memory.slot_bytes[k] for k in {memory.storage_id[e] for e in written})
    kernels = list(dict.fromkeys(kernels))
    return GraphPlan(json.dumps(graph, separators=(",", ":")), params, kernels, memory,
                     intermediate, planned)
