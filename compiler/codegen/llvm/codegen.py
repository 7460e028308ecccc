"""The "llvm" host target: packed-form IRModule → LLVM IR (llvmlite) → optimised → object file.

`codegen_host(mod, target, workdir)` (alias `codegen_host_llvm`) is registered for kind "llvm"
in compiler/codegen/__init__.py, which states the ABI and symbols the object provides. Every
PrimFunc is built into its own LLVM module and verified at once (a failure names the function),
then the modules are linked with the library symbols (llvm_library), optimised with LLVM's
standard pipeline at `-opt-level` (default 3) and emitted for the target machine:
`-mtriple` (default: this host), `-mcpu`/`-mattr` (default: this host's CPU and features when
not cross compiling, else "generic"), relocation model PIC. Float operations carry the
`contract` fast-math flag unless `-fp-contract=off` (so `a*b + c` becomes an fma where the CPU
has one); `-fast-math[-<flag>]` sets the other fast-math flags.
"""
from __future__ import annotations

import os
from typing import List, Tuple

import llvmlite.binding as llvm

from ...ir.errors import InternalError, TargetError
from .. import HostArtifact
from .function import emit_packed_function
from .library import emit_library
from .types import LIBRARY_CTX, ModuleContext

__all__ = ["codegen_host", "codegen_host_llvm", "create_target_machine", "is_cross_compiling"]

FAST_MATH_FLAGS = ("nnan", "ninf", "nsz", "arcp", "contract", "reassoc")

_initialized = False


def _init() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _initialized = True


def is_cross_compiling(target) -> bool:
    """Whether the target's `-mtriple` names another architecture than this host's."""
    attrs = getattr(target, "attrs", {}) or {}
    triple = attrs.get("mtriple")
    return bool(triple) and triple.split("-")[0] != llvm.get_process_triple().split("-")[0]


def create_target_machine(target) -> llvm.TargetMachine:
    """The LLVM target machine for a Target of kind "llvm" (or "c" options alike)."""
    _init()
    attrs = getattr(target, "attrs", {}) or {}
    host_triple = llvm.get_process_triple()
    triple = attrs.get("mtriple") or host_triple
    try:
        llvm_target = llvm.Target.from_triple(triple)
    except RuntimeError as err:
        raise TargetError(f"-mtriple={triple} is not a triple LLVM knows ({err}); e.g. "
                          "x86_64-linux-gnu, aarch64-linux-gnu") from None
    native = not is_cross_compiling(target)
    cpu = attrs.get("mcpu") or (llvm.get_host_cpu_name() if native else "generic")
    features = list(attrs.get("mattr") or [])
    if native and not attrs.get("mcpu"):
        features = [llvm.get_host_cpu_features().flatten()] + features
    opt = int(attrs.get("opt-level", 3))
    if not 0 <= opt <= 3:
        raise TargetError(f"-opt-level={opt} is out of range; use 0, 1, 2 or 3")
    return llvm_target.create_target_machine(cpu=cpu, features=",".join(f for f in features if f),
                                             opt=opt, reloc="pic", codemodel="default")


def fast_math_flags(target) -> Tuple[str, ...]:
    """The fast-math flags of float operations. `contract` is on by default (as TVM's
    AllowFPOpFusion=Fast: `a*b + c` may become one fma where the CPU has one); `-fp-contract=off`
    removes it for bit-exact results, `-fast-math[-<flag>]` adds the others."""
    attrs = getattr(target, "attrs", {}) or {}
    mode = attrs.get("fp-contract") or "fast"
    if mode not in ("fast", "off"):
        raise TargetError(f"-fp-contract={mode} is not a contraction mode; use "
                          "-fp-contract=fast (the default) or -fp-contract=off")
    contract = mode == "fast"
    if attrs.get("fast-math") and contract:
        return ("fast",)
    wanted = {f for f in FAST_MATH_FLAGS if attrs.get("fast-math") or attrs.get(f"fast-math-{f}")}
    wanted = wanted | {"contract"} if contract else wanted - {"contract"}
    return tuple(f for f in FAST_MATH_FLAGS if f in wanted)


def _system_lib_prefix(mod, target):
    prefix = mod.attrs.get("system_lib_prefix")
    if prefix is None and getattr(target, "system_lib", False):
        prefix = target.system_lib_prefix
    return prefix


def _verified(ctx: ModuleContext, what: str) -> llvm.ModuleRef:
    """The module parsed and verified by LLVM; a failure is an InternalError naming `what`."""
    text = str(ctx.module)
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        raise InternalError(f"llvm codegen produced invalid LLVM IR for {what}: {err}") from None
    return ref


def _entry(mod) -> str:
    entries = [f.attrs.get("global_symbol", n) for n, f in mod.items()
               if f.attrs.get("tir.is_entry_func")]
    if not entries and len(mod) == 1:
        name, func = next(iter(mod.items()))
        entries = [func.attrs.get("global_symbol", name)]
    # a function named "main" is itself `__tvm_ffi_main`: no forwarder
    return entries[0] if len(entries) == 1 and entries[0] != "main" else None


def optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine, opt: int) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    pto.loop_vectorization = opt >= 2
    pto.slp_vectorization = opt >= 2
    pto.loop_unrolling = opt >= 1
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)


def codegen_host(mod, target, workdir: str) -> HostArtifact:
    """Builds `mod` (packed form) into `<workdir>/host_llvm.o`; sources {"ll", "asm"}."""
    tm = create_target_machine(target)
    triple, layout = tm.triple, str(tm.target_data)
    prefix = _system_lib_prefix(mod, target)
    flags = fast_math_flags(target)

    def context(name):
        return ModuleContext(name, triple, layout, flags, system_lib=prefix is not None)

    symbols: List[str] = []
    linked = None
    for name, func in mod.items():
        symbol = func.attrs.get("global_symbol", name)
        ctx = context(symbol)
        try:
            emit_packed_function(ctx, func, symbol)
        except InternalError as err:
            raise InternalError(f"llvm codegen of function {symbol}: {err}") from None
        ref = _verified(ctx, f"function {symbol}")
        symbols.append(symbol)
        if linked is None:
            linked = ref
        else:
            linked.link_in(ref)
    glue = context("library")
    emit_library(glue, symbols, _entry(mod), prefix)
    glue_ref = _verified(glue, "the library symbols")
    if linked is None:
        linked = glue_ref
    else:
        linked.link_in(glue_ref)
    if prefix is not None:  # each system library keeps its own context slot
        linked.get_global_variable(LIBRARY_CTX).linkage = "internal"
    linked.triple, linked.data_layout = triple, layout
    linked.verify()
    optimize(linked, tm, int(getattr(target, "attrs", {}).get("opt-level", 3)))
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "host_llvm.o")
    with open(path, "wb") as f:
        f.write(tm.emit_object(linked))
    return HostArtifact(object_file=path,
                        sources={"ll": str(linked), "asm": tm.emit_assembly(linked)})


codegen_host_llvm = codegen_host
