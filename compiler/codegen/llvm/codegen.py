"""The "llvm" host target: packed-form IRModule → LLVM IR (llvmlite) → optimised → object file.

`codegen_host(mod, target, workdir)` (alias `codegen_host_llvm`) is registered for kind "llvm"
in compiler/codegen/__init__.py, which states the ABI and symbols the object provides. Every
PrimFunc is built into its own LLVM module and verified at once (a failure names the function),
then the modules are linked with the library symbols (llvm_library), optimised with LLVM's
standard pipeline at `-opt-level` (default 3) and emitted for the target machine:
`-mtriple` (default: this host; normalised to LLVM's four parts, so that `thumbv7em-none-eabihf`
gets the hard-float calling convention of `thumbv7em-unknown-none-eabihf`), `-mcpu`/`-mattr`
(default, and `-mcpu=native`: this host's CPU and features when not cross compiling, else
"generic"), relocation model PIC (static for bare-metal triples, OS "none"). Messages need no C
library (text.py): generated code calls only the runtime, memcpy/memset and libm. A `-mcpu` or
`-mattr` name LLVM does not know for the triple is a TargetError listing the valid ones, raised
before LLVM sees it (LLVM would abort the process). Float operations carry the
`contract` fast-math flag unless `-fp-contract=off` (so `a*b + c` becomes an fma where the CPU
has one); `-fast-math[-<flag>]` sets the other fast-math flags. Every generated function has
the "target-cpu" / "target-features" attributes of the target machine and a DWARF subprogram
(the object has .debug_info naming each function). Loads and stores carry the alignment their
buffer's data_alignment and index allow (at most the runtime's 64 bytes).
"""
from __future__ import annotations

import functools
import os
import pickle
import subprocess
import sys
from typing import FrozenSet, List, Optional, Tuple

import llvmlite.binding as llvm

from ... import build_cache, host_cache
from ...build_jobs import forked_map
from ...contrib.cc import create_relocatable
from ...ir.errors import BuildError, InternalError, TargetError
from ...target import Target, check_system_lib_prefix
from ...target.isa import vector_isa
from ...target.triple import is_bare_metal, normalize_triple
from .. import HostArtifact, LazySources
from ..c_family.c import compile_flags
from ..imports import collect_imports, compile_imports, link_imports
from .function import emit_packed_function
from .library import emit_library
from .llvm_calls import OVERLOAD_TAG
from .text import link_helpers
from .types import LIBRARY_CTX, ModuleContext

__all__ = ["codegen_host", "codegen_host_llvm", "create_target_machine", "is_cross_compiling"]

FAST_MATH_FLAGS = ("nnan", "ninf", "nsz", "arcp", "contract", "reassoc")

# A library of fewer functions is built in this process (a worker pool costs more).
PARALLEL_MIN_FUNCTIONS = 4
OBJECT_CACHE = "llvm-objects"   # the build cache's kind: a function's (object, IR text, flag)

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
    triple = normalize_triple(attrs.get("mtriple") or host_triple)
    try:
        llvm_target = llvm.Target.from_triple(triple)
    except RuntimeError as err:
        raise TargetError(f"-mtriple={triple} is not a triple LLVM knows ({err}); e.g. "
                          "x86_64-linux-gnu, aarch64-linux-gnu") from None
    native = not is_cross_compiling(target)
    cpu = attrs.get("mcpu") or ("native" if native else "generic")
    features = list(attrs.get("mattr") or [])
    _check_names(triple, cpu, features, native)
    if cpu == "native":
        cpu = llvm.get_host_cpu_name()
        features = [llvm.get_host_cpu_features().flatten()] + features
    opt = int(attrs.get("opt-level", 3))
    if not 0 <= opt <= 3:
        raise TargetError(f"-opt-level={opt} is out of range; use 0, 1, 2 or 3")
    return llvm_target.create_target_machine(cpu=cpu, features=",".join(f for f in features if f),
                                             opt=opt, reloc="static" if is_bare_metal(triple)
                                             else "pic", codemodel="default")


def function_attributes(target, tm: llvm.TargetMachine) -> dict:
    """"target-cpu" and "target-features" of every function, as the target machine has them."""
    attrs = getattr(target, "attrs", {}) or {}
    cpu = attrs.get("mcpu") or ("native" if not is_cross_compiling(target) else "generic")
    features = [f for f in (attrs.get("mattr") or []) if f]
    if cpu == "native":
        cpu = llvm.get_host_cpu_name()
        features = [llvm.get_host_cpu_features().flatten()] + features
    out = {"target-cpu": cpu}
    if features:
        out["target-features"] = ",".join(features)
    return out


def _check_names(triple: str, cpu: str, features: List[str], native: bool) -> None:
    """TargetError unless LLVM knows `cpu` and every `-mattr` feature for `triple`."""
    if cpu == "native":
        if not native:
            raise TargetError(f"-mcpu=native means this host's CPU, but -mtriple={triple} "
                              "builds for another machine; name its CPU with -mcpu=<name>")
    elif cpu != "generic" and not (native and cpu == llvm.get_host_cpu_name()):
        cpus = known_cpus(triple)
        if cpu not in cpus:
            host = f"-mcpu=native (this host: {llvm.get_host_cpu_name()}) or " if native else ""
            raise TargetError(f"-mcpu={cpu} is not a CPU LLVM knows for {triple}; use {host}"
                              f"one of: {', '.join(sorted(cpus))}")
    names = [f.lstrip("+-") for f in features if f]
    if names:
        known = known_features(triple)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise TargetError(f"-mattr: {', '.join(unknown)} is not a feature LLVM knows for "
                              f"{triple} (write +name or -name); the features are: "
                              f"{', '.join(sorted(known))}")


def known_cpus(triple: str) -> FrozenSet[str]:
    """The CPU names LLVM accepts for `triple` (what `llc -mcpu=help` lists)."""
    return _listing(triple)[0]


def known_features(triple: str) -> FrozenSet[str]:
    """The feature names LLVM accepts in `-mattr` for `triple`."""
    return _listing(triple)[1]


_LISTING = (
    "import sys, llvmlite.binding as llvm\n"
    "llvm.initialize_all_targets()\n"
    "llvm.initialize_all_asmprinters()\n"
    "llvm.Target.from_triple(sys.argv[1]).create_target_machine(cpu='help')\n")


@functools.lru_cache(maxsize=None)
def _listing(triple: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(CPUs, features) of `triple`. LLVM prints them to stderr for the CPU name "help", so
    they are asked of a child process (also keeping any LLVM abort out of this one)."""
    try:
        proc = subprocess.run([sys.executable, "-c", _LISTING, triple], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        raise TargetError(f"cannot list LLVM's CPUs for {triple} ({err}); use -mcpu=native "
                          "or leave -mcpu out") from None
    sections: List[set] = []
    for line in proc.stderr.splitlines():
        if line.startswith("Available "):
            sections.append(set())
        elif sections and line.startswith("  ") and line.strip():
            sections[-1].add(line.split()[0])
    if len(sections) < 2 or not sections[0]:
        raise TargetError(f"cannot list LLVM's CPUs for {triple} (the listing was not "
                          "readable); use -mcpu=native or leave -mcpu out")
    return frozenset(sections[0]), frozenset(sections[1])


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
    """The system-lib prefix of `mod` (None outside system-lib mode), checked: it becomes part
    of the library's symbol names."""
    prefix = mod.attrs.get("system_lib_prefix")
    if prefix is None and getattr(target, "system_lib", False):
        prefix = target.system_lib_prefix
    return prefix if prefix is None else check_system_lib_prefix(prefix)


def _verified(ctx: ModuleContext, what: str) -> llvm.ModuleRef:
    """The module parsed and verified by LLVM; a failure is an InternalError naming `what`
    (a BuildError when a call_llvm_intrin has types no version of its intrinsic takes)."""
    return parsed(ctx.text(), what)


def parsed(text: str, what: str) -> llvm.ModuleRef:
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        if OVERLOAD_TAG in str(err) or "Intrinsic" in str(err):
            raise BuildError(f"{what}: an LLVM intrinsic is called with types it does not take "
                             f"({str(err).strip()}); check the dtype and the arguments of "
                             "call_llvm_intrin") from None
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


def emit(tm: llvm.TargetMachine, module: llvm.ModuleRef, strength_reduce: bool = True,
         assembly: bool = False):
    """The object code (or assembly text) of an optimised module; `strength_reduce=False` runs
    the backend without loop strength reduction (NO_STRENGTH_REDUCE: every function of the
    module asked for none)."""
    llvm.set_option("", f"-disable-lsr={'false' if strength_reduce else 'true'}")
    return tm.emit_assembly(module) if assembly else tm.emit_object(module)


def _imported_ir(text: str, triple: str, layout: str) -> llvm.ModuleRef:
    """LLVM IR text of an "import_llvm" pragma, parsed and verified for linking."""
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        raise BuildError(f"pragma 'import_llvm': the LLVM IR does not parse: {err}") from None
    ref.triple, ref.data_layout = triple, layout
    return ref


def _in_parallel(mod, target, prefix, imports) -> bool:
    """Whether the functions are made into LLVM modules, optimised and emitted in worker
    processes (one object each, merged by `cc -r`): several functions, a host-native library
    that is not a system library (whose context slot must stay internal to one object) and
    imports no LLVM IR."""
    return (len(mod) >= PARALLEL_MIN_FUNCTIONS and prefix is None
            and not is_cross_compiling(target) and all(kind != "llvm" for kind, _ in imports))


@functools.lru_cache(maxsize=4)
def _target_machine(spec: str) -> llvm.TargetMachine:
    return create_target_machine(Target(spec))


def _object_of_made(make, spec: str, opt: int):
    """In a worker: (object code, LLVM IR text, strength_reduce) of the module `make()` gives."""
    what, ctx = make()
    text = ctx.text()
    return _object_of(text, what, spec, opt, ctx.strength_reduce), text, ctx.strength_reduce


def _function_key(name: str, func, spec: str, opt: int) -> Optional[str]:
    """The build-cache key of function `name`'s object (None: the cache is off): the target,
    the optimization level and the function's structural key, or the key its packed form was
    cached under (compiler/host_cache.py; compiler/build_cache.py adds the compiler's
    fingerprint)."""
    if build_cache.cache_dir() is None:
        return None
    text = host_cache.object_key(func) or build_cache.structural_text(func)
    return None if text is None else build_cache.key("llvm function", spec, str(opt), name, text)


def _objects(makers, keys, spec: str, opt: int):
    """(object code, IR text, strength_reduce) of each maker's module, in order: from the build
    cache where its key (None: no key) was built before, else made by forked workers, else here
    when the cache is on; None when none of that applies (no workers, no cache): the caller
    then builds one linked module."""
    cached = []
    for k in keys:
        data = build_cache.load(OBJECT_CACHE, k) if k is not None else None
        cached.append(pickle.loads(data) if data is not None else None)
    tasks = [functools.partial(_object_of_made, make, spec, opt)
             for make, hit in zip(makers, cached) if hit is None]
    fresh = forked_map(tasks) if len(tasks) > 1 else None
    if fresh is None:
        if build_cache.cache_dir() is None and len(tasks) > 1:
            return None
        fresh = (task() for task in tasks)

    def results():
        for k, hit in zip(keys, cached):
            if hit is None:
                hit = next(fresh)
                if k is not None:
                    build_cache.store(OBJECT_CACHE, k, pickle.dumps(hit))
            yield hit
    return results()


def _object_of(text: str, what: str, spec: str, opt: int, strength_reduce: bool) -> bytes:
    """In a worker: the object code of one module's LLVM IR text (verified, helpers linked,
    optimised at `opt`, see `emit` for `strength_reduce`)."""
    tm = _target_machine(spec)
    ref = parsed(text, what)
    link_helpers(ref)
    optimize(ref, tm, opt)
    return emit(tm, ref, strength_reduce)


def _linked(texts: List[str], tm: llvm.TargetMachine, opt: int) -> llvm.ModuleRef:
    """The modules of `texts` linked into one, helpers linked, optimised (for the sources of
    a library built in parallel)."""
    linked = None
    for text in texts:
        ref = llvm.parse_assembly(text)
        if linked is None:
            linked = ref
        else:
            linked.link_in(ref)
    link_helpers(linked)
    optimize(linked, tm, opt)
    return linked


def codegen_host(mod, target, workdir: str) -> HostArtifact:
    """Builds `mod` (packed form) into `<workdir>/host_llvm.o`; sources {"ll", "asm", "bc"}
    (LLVM IR text, assembly, LLVM bitcode as bytes)."""
    tm = create_target_machine(target)
    triple, layout = tm.triple, str(tm.target_data)
    prefix = _system_lib_prefix(mod, target)
    flags = fast_math_flags(target)
    opt = int(getattr(target, "attrs", {}).get("opt-level", 3))
    imports = collect_imports(mod)  # pragma "import_llvm" / "import_c" (codegen/imports.py)
    os.makedirs(workdir, exist_ok=True)

    attributes = function_attributes(target, tm)
    avx512 = vector_isa(target).name == "avx512"

    def context(name):
        ctx = ModuleContext(name, triple, layout, flags, system_lib=prefix is not None)
        ctx.function_attributes = attributes
        ctx.avx512 = avx512
        return ctx

    def function_module(name, func):
        symbol = func.attrs.get("global_symbol", name)
        ctx = context(symbol)
        try:
            emit_packed_function(ctx, func, symbol)
        except InternalError as err:
            raise InternalError(f"llvm codegen of function {symbol}: {err}") from None
        return f"function {symbol}", ctx

    def library_module():
        glue = context("library")
        glue.strength_reduce = False  # it has no loops: the functions decide
        emit_library(glue, [f.attrs.get("global_symbol", n) for n, f in mod.items()],
                     _entry(mod), prefix)
        return "the library symbols", glue

    # each makes (what, ModuleContext): one per function, then the library symbols
    makers = [functools.partial(function_module, n, f) for n, f in mod.items()]
    makers.append(library_module)
    results = None
    if _in_parallel(mod, target, prefix, imports):
        keys = [_function_key(n, f, str(target), opt) for n, f in mod.items()] + [None]
        results = _objects(makers, keys, str(target), opt)
    if results is not None:
        path, sources = _emit_in_parallel(results, opt, tm, workdir)
    else:
        path, sources = _emit_linked((make() for make in makers), imports, prefix, triple,
                                     layout, opt, tm, workdir)
    c_imports = [(k, t) for k, t in imports if k == "c"]
    path = link_imports(path, compile_imports(c_imports, workdir, compile_flags(target)), workdir)
    return HostArtifact(object_file=path, sources=sources)


def _emit_linked(modules, imports, prefix, triple, layout, opt, tm, workdir):
    """One module: every function verified as it is made, linked, optimised, emitted."""
    linked = None
    strength_reduce = False
    for what, ctx in modules:
        strength_reduce |= ctx.strength_reduce
        ref = _verified(ctx, what)
        if linked is None:
            linked = ref
        else:
            linked.link_in(ref)
    for kind, text in imports:
        if kind == "llvm":
            linked.link_in(_imported_ir(text, triple, layout))
    if prefix is not None:  # each system library keeps its own context slot
        linked.get_global_variable(LIBRARY_CTX).linkage = "internal"
    linked.triple, linked.data_layout = triple, layout
    link_helpers(linked)
    linked.verify()
    optimize(linked, tm, opt)
    path = os.path.join(workdir, "host_llvm.o")
    with open(path, "wb") as f:
        f.write(emit(tm, linked, strength_reduce))
    return path, LazySources({"ll": lambda: str(linked),
                              "asm": lambda: emit(tm, linked, strength_reduce, assembly=True),
                              "bc": linked.as_bitcode})


def _emit_in_parallel(results, opt, tm, workdir):
    """The (object code, IR text) `results` of the workers written out and the objects merged
    into one. The sources link the IR texts on first access."""
    texts: List[str] = []
    paths = []
    strength_reduce = False
    for i, (code, text, reduce) in enumerate(results):
        texts.append(text)
        strength_reduce |= reduce
        paths.append(os.path.join(workdir, f"host_llvm_{i}.o"))
        with open(paths[-1], "wb") as f:
            f.write(code)
    path = create_relocatable(os.path.join(workdir, "host_llvm.o"), paths)
    linked = functools.lru_cache(maxsize=1)(lambda: _linked(texts, tm, opt))
    return path, LazySources({"ll": lambda: str(linked()),
                              "asm": lambda: emit(tm, linked(), strength_reduce,
                                                  assembly=True),
                              "bc": lambda: linked().as_bitcode()})


codegen_host_llvm = codegen_host
