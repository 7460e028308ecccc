"""GraphExecutorFactoryModule: what a graph-level build returns for the graph executor (TVM's
`relay.build` result), and the GraphExecutorFactory payload it exports.

    factory = GraphExecutorFactoryModule(graph_json, lib, params, manifest)
    gmod = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    factory.export_library("model.so")    # one file: kernels + graph + params + manifest
    # elsewhere: GraphModule(microruntime.load_module("model.so")["default"](dev))

The exported library's `__tvm_ffi__library_bin` holds the factory as the ROOT of the import
tree, importing the kernel library ("_lib"), as TVM lays it out. The payload (TVM's
GraphExecutorFactory::SaveToBinary, plus Kiln's manifest, which TVM does not read):
    str graph_json; u64 count; vec<str> names; count tensor records (as in a params file);
    str module_name; str manifest (JSON, see `make_manifest`)
`make_manifest` computes the manifest from the graph (inputs, outputs, storage slot sizes,
total bytes, kernels) and the params; the runtime recomputes and compares it at load. A
link-params build (compiler/relax/backend/graph/linked_params.py) has its weights in the
kernel library as constant data: the payload then holds no copy of them, and the manifest
names them in "linked_params" (the runtime points their slots at the library's data).
`write_payload` adds to the manifest it writes the CRC-32C of the graph JSON and of the params
bytes (from the count to the last tensor record), "crc32c": {"graph_json", "params"}; an
exported ELF `.so` also ends with a checksum trailer over the rest of the file without the
library blob (`append_checksum_trailer`). The runtime verifies both at load, unless
MR_SKIP_CHECKSUM=1 is set.
"""
from __future__ import annotations

import json
import struct
from typing import Dict, Optional

import numpy as np

from microruntime.object import ObjectGeneric

from ..crc32c import crc32c
from ..export import export_library as _export_library
from ..ir.errors import CompilerError, TargetError
from ..runtime_module import RuntimeModule, SerializedModule

KIND = "GraphExecutorFactory"
MANIFEST_FORMAT = "kiln.manifest"
MANIFEST_VERSION = 1


class GraphError(CompilerError):
    """Graph JSON that a GraphExecutorFactoryModule cannot hold."""


def _u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def _string(data: bytes) -> bytes:
    return _u64(len(data)) + data


def _as_ndarray(value):
    import microruntime

    if isinstance(value, microruntime.NDArray):
        return value
    return microruntime.nd.array(np.asarray(value, order="C"))


def _tensor_records(params) -> memoryview:
    """The tensor records of a params file (save_param_dict's format), in params' order (a
    view of the file: a model's params are tens of MB, and each copy costs page faults)."""
    import microruntime

    blob = memoryview(microruntime.save_param_dict(params))
    pos = 16
    (count,) = struct.unpack_from("<Q", blob, pos)
    pos += 8
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", blob, pos)
        pos += 8 + n
    return blob[pos + 8:]  # after the tensor count


def _dtype_bytes(dtype: str) -> int:
    import microruntime

    t = microruntime.DataType(dtype)
    return (t.bits * t.lanes + 7) // 8


def make_manifest(graph_json: str, params: Dict[str, object],
                  workspace_bytes: Optional[int] = None, linked_params=()) -> dict:
    """The manifest of a graph and its params: the inputs that are not params (name, shape,
    dtype), the outputs, the names of the params in the payload ("params") and, when there
    are any, of those linked into the library ("linked_params"), bytes per storage slot (the
    largest entry mapped to it), their total, and the kernels the graph calls. With
    `workspace_bytes` (the most CPU workspace one kernel call holds,
    `RuntimeModule.workspace_bytes`) also that and "arena_bytes": the memory of an executor in
    an arena (`mr_graph_executor_create_in_arena`), each slot at a 64-byte boundary (but the
    slots of linked params, which stay where the library holds them), then the workspace."""
    linked = list(linked_params)
    try:
        g = json.loads(graph_json)
        nodes, row_ptr, attrs = g["nodes"], g["node_row_ptr"], g["attrs"]
        shapes, dtypes = attrs["shape"][1], attrs["dltype"][1]
        storage_ids = attrs["storage_id"][1]
    except (ValueError, KeyError, IndexError, TypeError) as err:
        raise GraphError(f"graph JSON lacks what a manifest needs ({err!r}): it must have "
                         "nodes, node_row_ptr and attrs shape/dltype/storage_id") from err
    inputs = [{"name": nodes[nid]["name"], "shape": list(shapes[row_ptr[nid]]),
               "dtype": dtypes[row_ptr[nid]]}
              for nid in g["arg_nodes"]
              if nodes[nid]["name"] not in params and nodes[nid]["name"] not in linked]
    outputs = [{"shape": list(shapes[row_ptr[nid] + idx]), "dtype": dtypes[row_ptr[nid] + idx]}
               for nid, idx, *_ in g["heads"]]
    slots = [0] * (max(storage_ids) + 1 if storage_ids else 0)
    for eid, sid in enumerate(storage_ids):
        nbytes = int(np.prod(shapes[eid], dtype=np.int64)) * _dtype_bytes(dtypes[eid])
        slots[sid] = max(slots[sid], nbytes)
    kernels = []
    for node in nodes:
        name = node.get("attrs", {}).get("func_name") if node["op"] == "tvm_op" else None
        if name and name not in ("__nop", "__copy") and name not in kernels:
            kernels.append(name)
    manifest = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "inputs": inputs,
                "outputs": outputs, "params": [n for n in params if n not in linked],
                "storage_bytes": slots, "total_bytes": sum(slots), "kernels": kernels}
    if linked:
        manifest["linked_params"] = linked
    if workspace_bytes is not None:
        in_library = {storage_ids[row_ptr[nid]] for nid in g["arg_nodes"]
                      if nodes[nid]["name"] in linked}
        manifest["workspace_bytes"] = int(workspace_bytes)
        manifest["arena_bytes"] = sum(_aligned(n) for sid, n in enumerate(slots)
                                      if sid not in in_library) + _aligned(workspace_bytes)
    return manifest


ARENA_ALIGNMENT = 64  # the runtime's MR_DATA_ALIGNMENT


def _aligned(nbytes: int) -> int:
    return -(-int(nbytes) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT


def write_payload(graph_json: str, params, module_name: str = "default",
                  manifest: Optional[dict] = None) -> bytes:
    """The GraphExecutorFactory payload (see the module doc); no manifest when None. The
    manifest written holds the checksums of the graph JSON and params written."""
    names = list(params)
    graph = graph_json.encode("utf-8")
    param_parts = [_u64(len(names)), _u64(len(names))]
    param_parts += [_string(n.encode("utf-8")) for n in names]
    if names:
        param_parts.append(_tensor_records(params))
    parts = [_string(graph)] + param_parts + [_string(module_name.encode("utf-8"))]
    if manifest is not None:
        params_crc = 0
        for part in param_parts:
            params_crc = crc32c(part, params_crc)
        manifest = dict(manifest, crc32c={"graph_json": crc32c(graph), "params": params_crc})
        parts.append(_string(json.dumps(manifest, separators=(",", ":")).encode("utf-8")))
    return b"".join(parts)


TRAILER_MAGIC = b"KILNCRC1"


def append_checksum_trailer(path: str, library_bin: Optional[bytes]) -> bool:
    """Ends the ELF library at `path` with the trailer the runtime checks before dlopen
    (microruntime/src/elf_check.c): "KILNCRC1", u64 offset and u64 size of the library blob
    (left out: its parts carry their own checksums), u32 0, then the u32 CRC-32C of the file
    without the blob followed by the trailer's 20 bytes before it. False (nothing written)
    when the file is not ELF or does not hold the blob."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x7fELF"):
        return False
    offset, size = len(data), 0
    if library_bin:
        offset, size = data.find(library_bin), len(library_bin)
        if offset < 0:
            return False
    fields = struct.pack("<QQI", offset, size, 0)
    view = memoryview(data)
    crc = crc32c(fields, crc32c(view[offset + size:], crc32c(view[:offset])))
    with open(path, "ab") as f:
        f.write(TRAILER_MAGIC + fields + struct.pack("<I", crc))
    return True


class GraphExecutorFactoryModule(ObjectGeneric):
    """The graph JSON, the kernel library and the params of a model, with TVM's API:
    `factory["default"](dev)` (or `factory(dev)`) creates a graph executor, `get_graph_json()`,
    `get_lib()`, `get_params()`, `get_executor_config()`, `export_library(path)`."""

    def __init__(self, graph_json: str, lib: RuntimeModule, params: Dict[str, object],
                 manifest: Optional[dict] = None, libmod_name: str = "default",
                 linked_params=()):
        if not isinstance(graph_json, str):
            raise GraphError(f"graph_json must be a str, not {type(graph_json).__name__}")
        if not isinstance(lib, RuntimeModule):
            raise TargetError(f"lib must be the kernel module compiler.build returned, not "
                              f"{type(lib).__name__}")
        self.graph_json = graph_json
        self.lib = lib
        self.params = {str(k): _as_ndarray(v) for k, v in (params or {}).items()}
        self.linked_params = [str(n) for n in linked_params]
        self.manifest = manifest if manifest is not None else make_manifest(
            graph_json, self.params, getattr(lib, "workspace_bytes", None), self.linked_params)
        self.libmod_name = libmod_name
        self._serialized = SerializedModule(KIND, self.get_payload())
        self._module = None
        if lib.runtime_module is not None:
            self._module = self.module  # loaded now: the runtime checks graph, params, manifest

    # ---- TVM's API -----------------------------------------------------------------------
    def get_graph_json(self) -> str:
        return self.graph_json

    get_executor_config = get_graph_json

    def get_lib(self) -> RuntimeModule:
        return self.lib

    def get_params(self) -> dict:
        """Every param, linked ones included."""
        return dict(self.params)

    def get_payload(self) -> bytes:
        """The serialized factory (the payload of its entry in the library blob): the params
        that are not linked into the library."""
        linked = set(self.linked_params)
        params = {k: v for k, v in self.params.items() if k not in linked}
        return write_payload(self.graph_json, params, self.libmod_name, self.manifest)

    @property
    def module(self):
        """The runtime factory module (microruntime), importing the loaded kernel library."""
        if self._module is None:
            if self.lib.runtime_module is None:
                raise TargetError("this model's kernels were compiled for another architecture: "
                                  "it can only be exported (export_library), not run here")
            factory = self._serialized.runtime_module
            factory.import_module(self.lib.runtime_module)
            factory.get_function("get_graph_json")  # checks every kernel resolves
            self._module = factory
        return self._module

    def asobject(self):
        return self.module

    def __getitem__(self, name):
        return self.module[name]

    def __call__(self, *devices):
        return self.module[self.libmod_name](*devices)

    def export_library(self, file_name, fcompile=None, addons=None, workspace_dir=None,
                       **kwargs):
        """One library (`.so`; `.a` for a `--system-lib` build; `.tar`, `.o`) holding the
        kernels, with this factory as the root of its import tree."""
        del addons
        parts = self.lib._library_parts(root=self._serialized)
        result = _export_library(parts, file_name, fcompile, workspace_dir, **kwargs)
        if str(file_name).endswith(".so"):
            append_checksum_trailer(str(file_name), parts.library_bin)
        return result

    def __repr__(self):
        return (f"GraphExecutorFactoryModule({len(self.params)} params, "
                f"{len(self.manifest['kernels'])} kernels, lib={self.lib!r})")
