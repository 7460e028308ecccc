"""`build(...)`: lower if needed, run the host passes, generate host code, link a shared library
and load it into the microruntime, callable at once (`m["test_add"](a, b, c)`), as `tvm.build`.

The host passes (`host_passes()` of compiler/tir/pipeline.py, run through its runner):
    split_host_device -> make_packed_api -> lower_call_packed -> lower_workspace
    -> lower_parallel -> lower_intrin -> annotate_entry
Their output (the "packed form") is the input of every host codegen; see
compiler/tir/transform/make_packed_api.py and compiler/codegen/__init__.py.

GPU targets ("cuda", "opencl", "metal"): split_host_device moves the thread-bound loop nests
into device kernels, launched from the host function by name (`tir.call_packed`, after
`__tvm_set_device`). The kernels go through `device_passes()` and a dialect codegen into a
device module (compiler/codegen/device_module.py) that the returned host module imports, so
`m.imported_modules[0].get_source()` is the kernel source and `export_library` writes one
library with the device code in its blob. `build({"llvm": m1, "opencl": m2})` builds the host
functions of every target into one host module (one host kind for all).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Dict, Mapping

from . import host_cache
from .codegen import HostArtifact, codegen_host, host_codegen_available
from .codegen.device_module import codegen_device
from .codegen.spirv import codegen_vulkan
from .contrib import cc
from .contrib.cc import create_shared
from .ir.errors import TargetError
from .ir.module import IRModule
from .lower import lower
from .runtime_module import RuntimeModule
from .target import Target
from .target.kinds import HOST_KINDS
from .tir import pipeline
from .tir.function import PrimFunc
from .tir.pipeline import run_passes
from .tir.transform.annotate_entry import annotate_entry
from .tir.transform.lower_workspace import workspace_bound


def build(inputs, args=None, target=None, target_host=None, runtime=None,
          name: str = "default_function", binds=None):
    """Builds a Schedule (with `args`), PrimFunc, IRModule, a list of PrimFuncs/IRModules (one
    module of all their functions, each callable by name) or {target: IRModule} into a
    RuntimeModule (compiler/runtime_module.py) wrapping the loaded microruntime Module.
    `runtime` (a relay.backend.Runtime, or its name) matters by its "system-lib" option: the
    host code is then built as a system library (as the target option `--system-lib`). As in
    TVM, a target given in the place of `args` (`build(mod, "llvm")`) is the target."""
    if target is None and isinstance(args, (str, Target)):
        args, target = None, args
    return build_lowered(_as_target_modules(inputs, args, target, name, binds), target_host,
                         system_lib=_asks_system_lib(runtime))


def _asks_system_lib(runtime) -> bool:
    """Whether `runtime` (None, a runtime's name, or a Runtime) asks for a system library."""
    if runtime is None or isinstance(runtime, str):
        return False
    options = getattr(runtime, "options", None)
    if not isinstance(options, Mapping):
        raise TargetError(f"runtime must be a Runtime or its name, not {type(runtime).__name__}")
    return bool(options.get("system-lib"))


def _as_system_lib(target: Target) -> Target:
    """`target` whose host code is a system library (its host gets `--system-lib`)."""
    if target.kind.name in HOST_KINDS:
        return target if target.system_lib else Target(f"{target} --system-lib")
    return target.with_host(_as_system_lib(target.host))


def build_lowered(mods, target_host=None, system_lib=False):
    """`build` of modules already lowered (by `lower`, or legalize's kernels): {target:
    IRModule}, a target None being the default CPU target. The host passes and codegen only.
    `system_lib`: build the host code as a system library."""
    mods = {_host_target(Target(t) if t is not None else _default_target(), target_host): m
            for t, m in mods.items()}
    if system_lib:
        mods = {_as_system_lib(t): m for t, m in mods.items()}
    host_target = _common_host(mods)
    hosts: Dict[str, object] = {}
    devices = []
    attrs: Dict[str, object] = {}
    for tgt, mod in mods.items():
        packed = host_passes(mod, tgt)
        attrs.update(packed.attrs)
        kernels = {g: f for g, f in packed.items()
                   if f.attrs.get("calling_conv") == "device_kernel"}
        for g, f in packed.items():
            if g in kernels:
                continue
            if g in hosts:
                raise TargetError(f"function '{g}' is defined for two targets; give the "
                                  "functions of each target distinct names")
            hosts[g] = f
        if not tgt.kind.is_host:
            devices.append(build_device(IRModule(kernels), tgt))
    if len(hosts) > 1:  # several functions: no `main` entry (as annotate_entry, as TVM)
        hosts = {g: f.with_attr("tir.is_entry_func", False) if f.attrs.get("tir.is_entry_func")
                 else f for g, f in hosts.items()}
    packed = IRModule(hosts, attrs)
    workdir = tempfile.mkdtemp(prefix="kiln_build_")
    try:
        artifact = codegen_host(packed, host_target, workdir)
        module = load_artifact(artifact, host_target, workdir, packed)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)  # a module owns it only once made
        raise
    for device in devices:
        module.import_module(device)
    return module


def build_device(kernels: IRModule, target: Target):
    """The device module of a GPU build's kernels: SPIR-V for "vulkan"
    (compiler/codegen/spirv/), else C-family source (compiler/codegen/device_module.py)."""
    kernels = run_passes(kernels, pipeline.device_passes())
    device = target.without_host()
    if device.kind.name == "vulkan":
        return codegen_vulkan(kernels, device)
    return codegen_device(kernels, device)


def _common_host(mods: Dict[Target, IRModule]) -> Target:
    """The one host target of every target of a build (a CPU target is its own host)."""
    hosts = [t if t.kind.is_host else t.host for t in mods]
    first = hosts[0]
    for h in hosts[1:]:
        if h.kind is not first.kind:
            raise TargetError(f"the targets of one build need one host kind; got "
                              f"{first.kind.name!r} and {h.kind.name!r} (set target_host)")
    return first


def host_passes(mod: IRModule, target: Target) -> IRModule:
    """The packed form of `mod` for `target` (functions get attr "target")."""
    funcs = {}
    for gname, func in mod.items():
        if "global_symbol" not in func.attrs:
            func = func.with_attr("global_symbol", gname)
        funcs[gname] = func.with_attr("target", target)
    mod = mod.with_functions(funcs)
    prefix = target.system_lib_prefix
    if prefix is not None and "system_lib_prefix" not in mod.attrs:
        mod = mod.with_attr("system_lib_prefix", prefix)
    passes = pipeline.host_passes()
    keys = host_cache.keys(mod, target)
    if not keys:
        return run_passes(mod, passes)
    hits = {g: f for g, f in ((g, host_cache.load(k)) for g, k in keys.items()) if f is not None}
    done = dict(hits)
    if len(hits) < len(mod):
        packed = run_passes(mod.with_functions({g: f for g, f in mod.items() if g not in hits}),
                            passes)
        for g, f in packed.items():
            if g in keys:
                host_cache.store(keys[g], f)
            done[g] = f
    done = {g: done[g].with_attr(host_cache.OBJECT_KEY, keys[g]) if g in keys else done[g]
            for g in [*mod.functions, *(g for g in done if g not in mod.functions)]}
    if annotate_entry in passes:  # the whole module's entry, not a part's
        done = {g: f.with_attr("tir.is_entry_func", False) if f.attrs.get("tir.is_entry_func")
                else f for g, f in done.items()}
        return annotate_entry(IRModule(done, mod.attrs))
    return IRModule(done, mod.attrs)


def _is_cross_llvm(target: Target) -> bool:
    from .codegen.llvm import is_cross_compiling

    return is_cross_compiling(target)


def load_artifact(artifact: HostArtifact, target: Target, workdir: str, mod: IRModule):
    """Links the object into a .so, loads it and wraps it with what export_library/get_source
    need (compiler/runtime_module.py). A cross-compiled llvm object is not loaded: that module
    only exports and shows its source; calling a function raises AttributeError."""
    import microruntime

    cross = target.kind.name == "llvm" and _is_cross_llvm(target)
    runtime = None
    if not cross:
        so_path = create_shared(os.path.join(workdir, "lib.so"), [artifact.object_file],
                                options=cc.KERNEL_LIBRARY_OPTIONS)
        runtime = microruntime.load_module(so_path)
    module = RuntimeModule(runtime, artifact, target, mod.attrs.get("system_lib_prefix"),
                           cross=cross)
    module.workspace_bytes = workspace_bound(mod)  # for a model's arena (manifest)
    # The loaded library stays mapped; the build directory goes with the module object.
    weakref.finalize(module, shutil.rmtree, workdir, True)
    return module


# ---- inputs and targets ---------------------------------------------------------------------
def _default_target() -> Target:
    current = Target.current()
    if current is not None:
        return current
    return Target("llvm" if host_codegen_available("llvm") else "c")


def _as_module(inp, args, name, binds) -> IRModule:
    """A schedule is lowered; so are a PrimFunc and an IRModule (as TVM's build does), so the
    current PassContext's lowering options apply to them too (its user passes at their phases,
    disabled passes, tir.disable_vectorize). The lower passes leave lowered IR as it is, so a
    module from `lower` may be built again."""
    if isinstance(inp, (IRModule, PrimFunc)):
        return lower(inp, name=name)
    if isinstance(inp, (list, tuple)) and inp and \
            all(isinstance(x, (IRModule, PrimFunc)) for x in inp):
        functions: Dict[str, object] = {}
        for x in inp:
            for fname, func in lower(x, name=name).items():
                if fname in functions:
                    raise TargetError(f"build of a list: two functions are named {fname!r}; "
                                      "give each its own name (lower(..., name=...))")
                functions[fname] = func
        return IRModule(functions)
    return lower(inp, args, name=name, binds=binds)


def _as_target_modules(inputs, args, target, name, binds) -> Dict[Target, IRModule]:
    if isinstance(inputs, dict):
        out = {}
        for tgt, mod in inputs.items():
            if not isinstance(mod, IRModule):
                raise TargetError(f"build({{target: module}}) needs IRModules, got "
                                  f"{type(mod).__name__} for {tgt!r}")
            out[Target(tgt)] = lower(mod, name=name)  # lowered IR stays as it is
        return out
    tgt = Target(target) if target is not None else _default_target()
    return {tgt: _as_module(inputs, args, name, binds)}


def _host_target(target: Target, target_host) -> Target:
    """`target` ready to build: a device target gets its host (`target_host`, else its own
    `host`, else the default CPU target); a CPU target is its own host."""
    if target.kind.name not in HOST_KINDS:
        host = target_host if target_host is not None else target.host
        return target.with_host(host if host is not None else _default_host())
    if target.kind.name == "llvm" and not host_codegen_available("llvm"):
        raise TargetError("target 'llvm' is not available: compiler.codegen.llvm cannot be "
                          "imported (is llvmlite installed?); use target 'c'")
    if target_host is not None:
        host = Target(target_host)
        if host.kind is not target.kind:
            raise TargetError(f"target_host {host.kind.name!r} differs from the CPU target "
                              f"{target.kind.name!r}; for a CPU target the host is the target")
    return target


def _default_host() -> Target:
    return Target("llvm" if host_codegen_available("llvm") else "c")

