"""`relax.build`: a graph-level module (control flow, calls, closures, symbolic shapes) → a
Relax VM executable plus its kernel library.

    ex = compiler.relax.build(mod, target="llvm", params=params)
    vm = microruntime.relax_vm.VirtualMachine(ex, microruntime.cpu())
    y = vm["main"](x)                         # any batch size n when x is (n, 784)
    ex.export_library("model.so")             # one file; loads in Kiln and in TVM 0.27

    ex = compiler.relax.build(mod, target="opencl", params=params)   # GPU kernels
    vm = VirtualMachine(ex, microruntime.opencl())   # devices [opencl, cpu]: storage and
                                                     # weights on the GPU, shapes on the host

The pipeline for the VM is this flat list; each pass is one file in compiler/relax/transform.
The exported library is laid out as TVM's: its `__tvm_ffi__library_bin` holds the executable
(kind "relax.VMExecutable") as the root of the import tree, importing the kernels of the library
itself ("_lib"). A GPU target ("opencl", "cuda"; with its host as `Target("opencl",
host="llvm")`, `target_host=` or a dict {"opencl": ..., "llvm": ...}, as relay.build takes
it) builds the kernels for the device and, on the host, the shape functions and the kernels with
nothing to spread over GPU threads (legalize_vm_gpu.py, device_copies_vm.py).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, List, Mapping, Optional, Sequence

from ..build import build as build_kernels
from ..build_jobs import collector_paced_for_builds
from ..export import export_library as _export_library
from ..ir.errors import IRError, TargetError
from ..ir.module import IRModule
from ..relay.build_module import split_targets
from ..runtime_module import RuntimeModule, SerializedModule
from ..target import Target
from ..tir.function import PrimFunc
from . import expr as X
from .backend.vm_codegen import codegen
from .transform import bind_params, eliminate_dead_code, fold_batch_norm, fold_constant
from .transform.convert_layout_nchwc import convert_layout_nchwc
from .transform.device_copies_vm import device_copies_vm
from .transform.lambda_lift import lambda_lift
from .transform.legalize import HOST_FALLBACK
from .transform.legalize_vm import legalize_vm
from .transform.lower_shapes_vm import HOST_FUNC, lower_shapes_vm
from .transform.plan_memory_vm import plan_memory_vm
from .transform.transpose_dense_weight import transpose_dense_weight
from .transform.winograd_conv2d import winograd_conv2d
from .vm_format import VMExecutableBytes

KIND = "relax.VMExecutable"

Pass = Callable[[IRModule], IRModule]


def default_pipeline(target=None) -> List[Pass]:
    """The VM's graph-level passes after weights are bound, in order, for the kernels'
    `target` (None: a CPU)."""
    return [
        lambda_lift,          # local functions -> module functions, closures
        fold_constant,        # constant subgraphs computed now
        fold_batch_norm,      # batch norms into scale/shift, then into weights
        eliminate_dead_code,  # what folding left unused
        partial(convert_layout_nchwc, target=target),  # CPU: conv regions in NCHW[x]c
        partial(winograd_conv2d, target=target),  # CPU: 3x3 stride-1 convs by Winograd
        transpose_dense_weight,  # dense with a constant weight -> matmul by W.T (contiguous N)
        partial(legalize_vm, target=target),       # operators fused into kernels, R.call_tir
        partial(device_copies_vm, target=target),  # GPU: host kernels' values copied across
        plan_memory_vm,       # storage + alloc_tensor + kernel calls, reuse, kills
        lower_shapes_vm,      # entry checks, shape heap, make_shape, shape functions
    ]


def lower_for_vm(mod, params: Optional[Mapping[str, Any]] = None,
                 pipeline: Optional[Sequence[Pass]] = None, target=None) -> IRModule:
    """The module as the VM back end takes it (kernels and shape functions as PrimFuncs),
    its kernels for `target` (None: a CPU; see `build` for the forms of a GPU target)."""
    device, _ = split_targets(target)
    mod = _as_module(mod)
    if params:
        mod = bind_params(mod, params)
    for p in (default_pipeline(device) if pipeline is None else pipeline):
        mod = p(mod)
    return mod


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
    exe = codegen(lowered)
    if device.kind.is_host:
        lib = build_kernels(IRModule(funcs), target=device, target_host=host)
        return Executable(exe, lib, lowered)
    host = Target(host) if host is not None else device.host or Target("llvm")
    on_host = {k: f for k, f in funcs.items()
               if f.attrs.get(HOST_FALLBACK) or f.attrs.get(HOST_FUNC)}
    on_device = {k: f for k, f in funcs.items() if k not in on_host}
    parts = {device: IRModule(on_device)}
    if on_host:
        parts[host] = IRModule(on_host)
    lib = build_kernels(parts, target_host=host)
    return Executable(exe, lib, lowered)


def _as_module(mod) -> IRModule:
    if isinstance(mod, X.Function):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule) or not any(isinstance(f, X.Function)
                                                for _, f in mod.items()):
        raise IRError("relax.build needs an IRModule with graph-level functions (or one "
                      f"Function), got {type(mod).__name__}")
    return mod


__all__ = ["build", "default_pipeline", "lower_for_vm", "Executable", "KIND"]
