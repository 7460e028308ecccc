"""`relax.build`: a graph-level module (control flow, calls, closures, symbolic shapes) → a
Relax VM executable plus its kernel library.

    ex = compiler.relax.build(mod, target="llvm", params=params)
    vm = microruntime.relax_vm.VirtualMachine(ex, microruntime.cpu())
    y = vm["main"](x)                         # any batch size n when x is (n, 784)
    ex.export_library("model.so")             # one file; loads in Kiln and in TVM 0.27

    ex = compiler.relax.build(mod, target="opencl", params=params)   # GPU kernels
    vm = VirtualMachine(ex, microruntime.opencl())   # devices [opencl, cpu]: storage and
                                                     # weights on the GPU, shapes on the host

The VM's passes are the graph pipeline's (compiler/relax/pipeline.py, shared with relay.build),
then the VM back end's (compiler/relax/backend/vm: device copies, storage, shapes, bytecode).
The exported library is laid out as TVM's: its `__tvm_ffi__library_bin` holds the executable
(kind "relax.VMExecutable") as the root of the import tree, importing the kernels of the library
itself ("_lib"). A GPU target ("opencl", "cuda"; with its host as `Target("opencl",
host="llvm")`, `target_host=` or a dict {"opencl": ..., "llvm": ...}, as relay.build takes
it) builds the kernels for the device and, on the host, the shape functions and the kernels with
nothing to spread over GPU threads (transform/legalize_gpu.py, backend/vm/device_copies.py).
"""
from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence

from ..build_jobs import collector_paced_for_builds
from ..export import export_library as _export_library
from ..ir.errors import IRError, TargetError
from ..ir.module import IRModule
from ..runtime_module import RuntimeModule, SerializedModule
from ..target import Target, split_targets
from ..tir.function import PrimFunc
from . import expr as X
from . import pipeline as graph_pipeline
from .backend.kernel_library import compile_kernels
from .backend.vm import vm_passes
from .backend.vm.codegen import codegen
from .transform.bind_params import bind_params
from .vm_format import VMExecutableBytes

KIND = "relax.VMExecutable"

Pass = Callable[[IRModule], IRModule]


def default_pipeline(target=None) -> List[Pass]:
    """The VM's passes after weights are bound, in order, for the kernels' `target` (None: a
    CPU): the graph pipeline, then the VM back end's."""
    return graph_pipeline.graph_passes(target) + vm_passes(target)


def lower_for_vm(mod, params: Optional[Mapping[str, Any]] = None,
                 pipeline: Optional[Sequence[Pass]] = None, target=None) -> IRModule:
    """The module as the VM back end takes it (kernels and shape functions as PrimFuncs),
    its kernels for `target` (None: a CPU; see `build` for the forms of a GPU target)."""
    device, _ = split_targets(target)
    mod = _as_module(mod)
    if params:
        mod = bind_params(mod, params)
    passes = default_pipeline(device) if pipeline is None else list(pipeline)
    return graph_pipeline.run(mod, passes)


class Executable:
    """A compiled VM program: the bytecode (`exec_bytes`: as_text, stats, to_bytes) and the kernel
    library (`lib`). `mod` is the loaded runtime module (kind relax.VMExecutable, importing the
    kernels), what `VirtualMachine(ex, dev)` runs; `export_library(path)` writes one library."""

    def __init__(self, exec_bytes: VMExecutableBytes, lib: RuntimeModule, lowered: IRModule):
        self.exec_bytes = exec_bytes
        self.lib = lib
        self.lowered = lowered
        self._serialized = SerializedModule(KIND, exec_bytes.to_bytes())
        self._mod = None

    type_key = KIND

    def as_text(self) -> str:
        return self.exec_bytes.as_text()

    def stats(self) -> str:
        return self.exec_bytes.stats()

    def as_bytes(self) -> bytes:
        return self._serialized.payload

    @property
    def mod(self):
        """The runtime module of the executable, its kernel library imported."""
        if self._mod is None:
            if self.lib.runtime_module is None:
                raise TargetError("this executable's kernels were compiled for another "
                                  "architecture: export it (export_library), it cannot run here")
            rt = self._serialized.runtime_module
            if rt is None:
                raise TargetError("the microruntime in this process has no loader for "
                                  f"{KIND} modules; export the library and load it where one is")
            rt.import_module(self.lib.runtime_module)
            self._mod = rt
        return self._mod

    def asobject(self):
        return self.mod

    def jit(self):
        return self.mod

    def export_library(self, file_name, fcompile=None, addons=None, workspace_dir=None,
                       **kwargs):
        """One library (`.so`; `.a` for a `--system-lib` target; `.tar`, `.o`): the kernels, and
        the executable as the root of the blob's import tree."""
        del addons
        return _export_library(self.lib._library_parts(root=self._serialized), file_name,
                               fcompile, workspace_dir, **kwargs)

    def __repr__(self):
        n = sum(1 for f in self.exec_bytes.func_table if f.kind == 1)
        return f"Executable({n} VM functions, {len(self.exec_bytes.constants)} constants)"


def build(mod, target="llvm", params: Optional[Mapping[str, Any]] = None,
          pipeline: Optional[Sequence[Pass]] = None, exec_mode: str = "bytecode",
          system_lib: Optional[bool] = None, target_host=None) -> Executable:
    """Compiles every graph-level function of `mod` for the Relax VM: the kernels for `target`
    (a CPU target: "llvm", "c", with `--system-lib` for a static library; or a GPU target
    "opencl", "cuda" with its host: `Target("opencl", host="llvm")`, `target_host`, or a dict
    {"opencl": ..., "llvm": ...}) and the bytecode."""
    del system_lib
    if exec_mode != "bytecode":
        raise TargetError(f"relax.build: exec_mode {exec_mode!r} is not supported; only "
                          "'bytecode'")
    device, host = split_targets(target, target_host)
    if device is None:
        device = Target("llvm")
    if pipeline is None:
        pipeline = default_pipeline(device)
    with collector_paced_for_builds():
        return _build(mod, params, pipeline, device, host)


def _build(mod, params, pipeline, device: Target, host) -> Executable:
    lowered = lower_for_vm(mod, params, pipeline)
    funcs = {k: f for k, f in lowered.items() if isinstance(f, PrimFunc)}
    return Executable(codegen(lowered), compile_kernels(funcs, device, host), lowered)


def _as_module(mod) -> IRModule:
    if isinstance(mod, X.Function):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule) or not any(isinstance(f, X.Function)
                                                for _, f in mod.items()):
        raise IRError("relax.build needs an IRModule with graph-level functions (or one "
                      f"Function), got {type(mod).__name__}")
    return mod


__all__ = ["build", "default_pipeline", "lower_for_vm", "Executable", "KIND"]
