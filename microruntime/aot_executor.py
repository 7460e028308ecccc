"""microruntime.aot_executor: TVM's `tvm.runtime.executor.AotModule`, over a library compiled
for the AOT executor (its generated run function `tvmgen_<name>_run`).

    lib = microruntime.load_module("model.so")      # relay.build(..., executor=Executor("aot"))
    aot = AotModule(lib["default"](microruntime.cpu()))
    aot.set_input("x", x)
    aot.run()
    y = aot.get_output(0).numpy()

The module holds one buffer per input and output and the model's workspace, made once when it
is created; `run` calls the run function over them (through its packed entry
`tvmgen_<name>___tvm_main__`), so running allocates nothing. Its inputs, outputs and workspace
size are read from the library (`tvmgen_<name>_get_metadata`). `get_output` returns the
module's own buffer, which the next `run` overwrites.
"""
import json
import threading

import numpy as np

from .base import register_error
from .device import cpu
from .ndarray import empty


@register_error
class AotExecutorError(RuntimeError):
    """A library that is not an AOT model, or a wrong input name or index."""


class AotModule:
    """The AOT executor of `module` (what `lib[mod_name](dev)` returns: the model's library)."""

    def __init__(self, module, mod_name="default"):
        self.module = module
        self.lock = threading.RLock()
        prefix = f"tvmgen_{mod_name}"
        try:
            meta = module[f"{prefix}_get_metadata"]()
            self._main = module[f"{prefix}___tvm_main__"]
        except AttributeError as err:
            raise AotExecutorError(f"{module!r} holds no AOT model named {mod_name!r} (no "
                                   f"{prefix}_get_metadata): build it with "
                                   "relay.build(..., executor=Executor('aot')), or pass its "
                                   "mod_name") from err
        self.metadata = json.loads(meta)
        self._input_names = [i["name"] for i in self.metadata["inputs"]]
        self._inputs = [empty(i["shape"], i["dtype"]) for i in self.metadata["inputs"]]
        self._outputs = [empty(o["shape"], o["dtype"]) for o in self.metadata["outputs"]]
        self._workspace = empty((max(int(self.metadata["workspace_bytes"]), 1),), "uint8",
                                cpu(0))
        self._args = self._inputs + self._outputs + [self._workspace]

    def _index(self, key):
        if isinstance(key, str):
            if key not in self._input_names:
                raise AotExecutorError(f"the model has no input {key!r}; its inputs are "
                                       f"{', '.join(self._input_names) or '(none)'}")
            return self._input_names.index(key)
        if isinstance(key, (int, np.integer)) and 0 <= key < len(self._inputs):
            return int(key)
        raise AotExecutorError(f"input index {key!r} out of range: the model has "
                               f"{len(self._inputs)} inputs")

    def set_input(self, key=None, value=None, **params):
        """Copies `value` into input `key` (name or index), and each keyword argument into the
        input of that name (names the model does not have are skipped, as in TVM)."""
        with self.lock:
            if key is not None:
                self._inputs[self._index(key)].copyfrom(value)
            for name, v in params.items():
                if name in self._input_names:
                    self._inputs[self._input_names.index(name)].copyfrom(v)

    def run(self, **input_dict):
        """Sets the given inputs, then runs the model."""
        with self.lock:
            if input_dict:
                self.set_input(**input_dict)
            self._main(*self._args)

    def get_input(self, key, out=None):
        """Input `key` (name or index); copied into `out` when given."""
        value = self._inputs[self._index(key)]
        return value if out is None else value.copyto(out)

    def get_output(self, index, out=None):
        """Output `index`; copied into `out` when given."""
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self._outputs):
            raise AotExecutorError(f"output index {index!r} out of range: the model has "
                                   f"{len(self._outputs)} outputs")
        value = self._outputs[int(index)]
        return value if out is None else value.copyto(out)

    def get_num_inputs(self):
        return len(self._inputs)

    def get_num_outputs(self):
        return len(self._outputs)

    def get_input_index(self, name):
        """The index of input `name`, or -1."""
        return self._input_names.index(name) if name in self._input_names else -1

    def get_input_name(self, index):
        return self._input_names[self._index(index)]

    def get_input_info(self):
        """({name: shape}, {name: dtype}) of the inputs."""
        ins = self.metadata["inputs"]
        return ({i["name"]: tuple(i["shape"]) for i in ins},
                {i["name"]: i["dtype"] for i in ins})

    def get_workspace_size(self):
        """Bytes of the workspace the run function uses."""
        return int(self.metadata["workspace_bytes"])


__all__ = ["AotExecutorError", "AotModule"]
