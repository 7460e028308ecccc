"""microruntime.graph_executor: TVM's `tvm.contrib.graph_executor`, over the C graph executor.

    lib = microruntime.load_module("model.so")          # a GraphExecutorFactory module
    gmod = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gmod.set_input("x", x)
    gmod.run()
    y = gmod.get_output(0).numpy()

`create(graph_json, libmod, device)` runs graph JSON over a kernel library directly.
`read_manifest(path)` reads a model's manifest from the file without loading its kernels (also
`python -m microruntime manifest model.so`).

Threads: each call of a GraphModule is atomic, but a set_input/run/get_output sequence is not,
and get_output gives a view of the executor's memory that the next run overwrites. For
concurrent inference, give each thread its own GraphModule (`lib["default"](dev)` again:
the kernels are shared), or share one and use `infer(**inputs)`, which returns copies, or hold
`gmod.lock` around a sequence.
"""
import json
import struct
import threading

import numpy as np

from .abi import DEVICE_NAMES
from .base import register_error
from .device import Device
from .library_file import load_module_of_kind
from .module import num_threads
from .ndarray import NDArray, array
from .packed_func import get_global_func
from .profiling import Count, Duration, Percent, Report, time_evaluator


@register_error
class GraphExecutorError(RuntimeError):
    """A mistake in a graph, its inputs or its manifest (kind "GraphExecutorError")."""


def get_device(libmod, device):
    """(devices, number of RPC devices (always 0 here), [device_type, device_id, ...])."""
    del libmod
    devices = list(device) if isinstance(device, (list, tuple)) else [device]
    for dev in devices:
        if not isinstance(dev, Device):
            raise ValueError(f"device must be a Device or a list of Devices, not "
                             f"{type(dev).__name__}")
    if not devices:
        raise ValueError("no device given")
    type_id = []
    for dev in devices:
        type_id += [dev.device_type, dev.device_id]
    return devices, 0, type_id


def create(graph_json_str, libmod, device):
    """A GraphModule running `graph_json_str` with the kernels of `libmod` on `device`."""
    if not isinstance(graph_json_str, str):
        raise TypeError(f"graph_json_str must be a str, not {type(graph_json_str).__name__}")
    _, _, device_type_id = get_device(libmod, device)
    fcreate = get_global_func("tvm.graph_executor.create")
    return GraphModule(fcreate(graph_json_str, libmod, *device_type_id))


def _tensor(value):
    return value if isinstance(value, NDArray) else array(np.asarray(value))


class GraphModule:
    """A wrapper of a GraphExecutor module (what `lib["default"](dev)` returns); its functions
    are also reachable directly: `gmod["run"]()`.

    Threads: every method holds `self.lock` (a re-entrant lock) while it runs, and the C
    executor serializes calls too, so no call sees another half done. A sequence of calls is
    not atomic, and `get_output` returns a view of the executor's memory that the next `run`
    overwrites. Threads that share one GraphModule either call `infer(**inputs)` (inputs set,
    graph run and outputs copied out under the lock) or hold the lock around their sequence:

        with gmod.lock:
            gmod.set_input("x", x)
            gmod.run()
            y = gmod.get_output(0).numpy()

    For inference in parallel, give each thread its own GraphModule (`lib["default"](dev)`
    once per thread); the kernels are shared and only the executor's memory is per module.
    """

    def __init__(self, module):
        self.module = module
        self.lock = threading.RLock()
        self._set_input = module["set_input"]
        self._set_input_zero_copy = module["set_input_zero_copy"]
        self._set_output_zero_copy = module["set_output_zero_copy"]
        self._run = module["run"]
        self._get_output = module["get_output"]
        self._get_input = module["get_input"]
        self._get_num_outputs = module["get_num_outputs"]
        self._get_input_index = module["get_input_index"]
        self._get_input_info = module["get_input_info"]
        self._get_num_inputs = module["get_num_inputs"]
        self._load_params = module["load_params"]
        self._share_params = module["share_params"]

    def set_input(self, key=None, value=None, **params):
        """Copies `value` into input `key` (name or index), and each keyword argument into the
        input of that name (names the graph does not have are skipped, as in TVM)."""
        with self.lock:
            if key is not None:
                self._set_input(key, _tensor(value))
            for name in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k])))):
                if self._get_input_index(name) >= 0:
                    self._set_input(name, _tensor(params[name]))

    def set_input_zero_copy(self, key=None, value=None, **params):
        """Uses NDArray `value` as input `key` in place (same shape, dtype and device, 64-byte
        aligned); keyword arguments likewise."""
        with self.lock:
            if key is not None:
                self._set_input_zero_copy(key, value)
            for name, v in params.items():
                if self._get_input_index(name) >= 0:
                    self._set_input_zero_copy(name, v)

    def set_output_zero_copy(self, key, value):
        """Makes the graph write output `key` (an index) into NDArray `value` in place."""
        with self.lock:
            self._set_output_zero_copy(key, value)

    def run(self, **input_dict):
        """Sets the given inputs, then runs the graph."""
        with self.lock:
            if input_dict:
                self.set_input(**input_dict)
            self._run()

    def infer(self, **inputs):
        """Sets `inputs` (name -> array), runs the graph and returns every output as a numpy
        array (a copy), all under `self.lock`: safe to call from several threads at once."""
        with self.lock:
            self.run(**inputs)
            return [self._get_output(i).numpy() for i in range(self._get_num_outputs())]

    def get_num_outputs(self):
        return self._get_num_outputs()

    def get_num_inputs(self):
        """The graph's inputs, parameters included (its arg_nodes)."""
        return self._get_num_inputs()

    def get_input(self, index, out=None):
        """Input `index` (name or index); copied into `out` when given."""
        with self.lock:
            if out is not None:
                self._get_input(index, out)
                return out
            return self._get_input(index)

    def get_input_index(self, name):
        """The index of input `name`, or -1."""
        return self._get_input_index(name)

    def get_input_info(self):
        """({name: shape}, {name: dtype}) of the inputs that are not parameters."""
        names, shapes, dtypes = self._get_input_info()
        return (dict(zip(names, (tuple(s) for s in shapes))),
                dict(zip(names, (str(d) for d in dtypes))))

    def get_output(self, index, out=None):
        """Output `index`; copied into `out` when given."""
        with self.lock:
            if out is not None:
                self._get_output(index, out)
                return out
            return self._get_output(index)

    def debug_get_output(self, node, out=None):
        """Runs the graph up to `node` (index or name) and gives its first output (into `out`
        when given)."""
        with self.lock:
            if out is not None:
                self.module["debug_get_output"](node, out)
                return out
            return self.module["debug_get_output"](node)

    def load_params(self, params_bytes):
        """Sets the inputs named in a serialized parameter dict (save_param_dict)."""
        with self.lock:
            self._load_params(bytearray(params_bytes))

    def share_params(self, other, params_bytes):
        """Uses `other`'s parameters (named in `params_bytes`) in place, without copies."""
        with self.lock:
            other = other.module if isinstance(other, GraphModule) else other
            self._share_params(other, bytearray(params_bytes))

    def __getitem__(self, key):
        return self.module[key]

    def benchmark(self, device, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0,
                  repeats_to_cooldown=1, **kwargs):
        """Times `func_name` (TVM's benchmark): a BenchmarkResult of `repeat` means of `number`
        calls each. With end_to_end, each call also copies the inputs in (kwargs) and the
        outputs out."""
        min_repeat_ms = 0 if min_repeat_ms is None else min_repeat_ms
        options = dict(repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
                       limit_zero_time_iterations=limit_zero_time_iterations,
                       cooldown_interval_ms=cooldown_interval_ms,
                       repeats_to_cooldown=repeats_to_cooldown)
        if end_to_end:
            host = {k: np.asarray(v.numpy() if isinstance(v, NDArray) else v)
                    for k, v in kwargs.items()}

            def run_from_inputs():
                self.set_input(**host)
                self._run()
                for i in range(self.get_num_outputs()):
                    self.get_output(i).numpy()

            return time_evaluator(run_from_inputs, device, **options)()
        if kwargs:
            self.set_input(**kwargs)
        return self.module.time_evaluator(func_name, device, **options)()

    def profile(self, number=1, repeat=1, **input_dict):
        """Runs the graph node by node, timing each, and returns a Report: one call per op node
        (Name: its function, Duration (us), Percent, Device, Count, Argument Shapes, Node)."""
        if input_dict:
            self.set_input(**input_dict)
        raw = self.module["run_individual"](number, repeat)
        seconds = struct.unpack(f"@{len(raw) // 8}d", raw)
        graph = json.loads(self.module["get_graph_json"]())
        nodes, attrs, row_ptr = graph["nodes"], graph["attrs"], graph["node_row_ptr"]
        shapes, dtypes = attrs["shape"][1], attrs["dltype"][1]
        dev = self.get_output(0).device
        dev_name = f"{DEVICE_NAMES.get(dev.device_type, 'dev')}{dev.device_id}"
        calls, total = [], sum(seconds) * 1e6
        for nid, node in enumerate(nodes):
            if node["op"] != "tvm_op" or node["attrs"]["func_name"] == "__nop":
                continue
            n_out = int(node["attrs"]["num_outputs"])
            eids = [row_ptr[i] + j for i, j, *_ in node["inputs"]]
            eids += [row_ptr[nid] + j for j in range(n_out)]
            us = seconds[nid] * 1e6
            calls.append({
                "Name": node["attrs"]["func_name"], "Node": node["name"],
                "Duration (us)": Duration(us),
                "Percent": Percent(100.0 * us / total if total else 0.0),
                "Device": dev_name, "Count": Count(1),
                "Argument Shapes": ", ".join(
                    f"{dtypes[e]}[{', '.join(str(d) for d in shapes[e])}]" for e in eids),
            })
        return Report(calls, {dev_name: {"Duration (us)": Duration(total)}},
                      {"Number of threads": Count(num_threads()), "Executor": "Graph"})


# ---- the manifest, read from the file -------------------------------------------------------
def read_manifest(path):
    """The manifest (a dict) of the model exported at `path` (.so, .a, .o or .tar), read from
    the file's library blob without loading its kernels or running anything: the runtime's
    GraphExecutorFactory loader makes the factory from its payload (checking it whole) and
    gives its manifest. ValueError when the file holds no GraphExecutorFactory, or one without
    a manifest."""
    manifest = load_module_of_kind(path, "GraphExecutorFactory")["get_manifest"]()
    if manifest is None:
        raise ValueError(f"{path}: the model has no manifest (it was not exported by Kiln)")
    return json.loads(manifest)


def print_manifest(path, file=None):
    """Prints a model's manifest: inputs, outputs, params, memory and kernels."""
    m = read_manifest(path)
    lines = [f"model: {path}"]
    for i in m["inputs"]:
        lines.append(f"  input  {i['name']}: {i['dtype']}{list(i['shape'])}")
    for k, o in enumerate(m["outputs"]):
        lines.append(f"  output {k}: {o['dtype']}{list(o['shape'])}")
    lines.append(f"  params: {len(m['params'])} ({', '.join(m['params'])})")
    lines.append(f"  storage: {len(m['storage_bytes'])} slots, {m['total_bytes']} bytes")
    lines.append(f"  kernels: {len(m['kernels'])} ({', '.join(m['kernels'])})")
    print("\n".join(lines), file=file)


__all__ = ["GraphExecutorError", "GraphModule", "create", "get_device", "print_manifest",
           "read_manifest"]
