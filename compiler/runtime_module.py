"""RuntimeModule: what `compiler.build` returns (TVM's `tvm.runtime.Module` for compiled code).

    m = compiler.build(s, [A, B, C], target="llvm", name="add")
    m["add"](a, b, c)                 # callable at once: the loaded microruntime Module
    m.get_source("ll"); m.save("add.o")
    m.import_module(SerializedModule("cuda", payload))
    m.export_library("add.so")        # host code + every import in one library

It wraps the loaded runtime module (`runtime_module`; None for code cross-compiled for another
architecture, which only exports) and knows what the runtime does not: the host object file and
generated sources, and the import tree with each non-host module's serialized form (kind +
payload bytes, TVM's SaveToBytes). On export, host code (this module and imported
RuntimeModules, static libraries) is linked into one library; every other import travels in
its `__tvm_ffi__library_bin` blob, which the loader (microruntime or TVM 0.27) decodes with the
global function `ffi.Module.load_from_bytes.<kind>`.
"""
from __future__ import annotations

import os
import shutil
from typing import List, Optional

from microruntime.module import property_mask
from microruntime.object import ObjectGeneric

from .codegen import HostArtifact
from .codegen.serialized_module import SerializedModule
from .export import HostCode, LibraryParts, export_library, pack_library_bin, save_source
from .ir.errors import TargetError
from .target import Target


class RuntimeModule(ObjectGeneric):
    """A built host module (see the module doc); calls go to the loaded runtime module, and
    passed to a runtime function it is that module (`graph_executor.create(json, lib, dev)`)."""

    # The entry function's name, as tvm_ffi.Module.entry_name in TVM 0.27 ("main", the symbol
    # `__tvm_ffi_main`).
    entry_name = "main"

    def __init__(self, runtime, artifact: HostArtifact, target: Target,
                 system_lib_prefix: Optional[str] = None, cross: bool = False):
        self._runtime = runtime
        self._artifact = artifact
        self._target = target
        self._system_lib_prefix = system_lib_prefix
        self._cross = cross
        self._imports: List[object] = []

    # ---- calling (the runtime module) --------------------------------------------------
    @property
    def runtime_module(self):
        """The loaded microruntime Module (None for cross-compiled code)."""
        return self._runtime

    def asobject(self):
        """The runtime module, which is what a runtime function receives."""
        if self._runtime is None:
            raise TypeError(f"Module[{self.type_key}] was compiled for another architecture "
                            f"({self._target}) and cannot be passed to a function here")
        return self._runtime

    def get_function(self, name, query_imports=False):
        """The function `name` (AttributeError when the module has none)."""
        if self._runtime is None:
            raise AttributeError(f"Module[{self.type_key}] cannot run functions here: it was "
                                 f"compiled for another architecture ({self._target}); "
                                 f"{name!r} is only exported (export_library)")
        return self._runtime.get_function(name, query_imports)

    def __getitem__(self, name):
        if self._runtime is None:
            return self.get_function(name)  # raises: nothing runs here
        return self._runtime[name]          # the runtime module caches its functions

    def __call__(self, *args):
        return self.entry_func(*args)

    @property
    def entry_func(self):
        """The entry function (`__tvm_ffi_main`)."""
        return self[self.entry_name]

    def implements_function(self, name, query_imports=False):
        if self._runtime is None:
            return False
        return self._runtime.implements_function(name, query_imports)

    def time_evaluator(self, func_name, dev, *args, **kwargs):
        """A callable timing `func_name` (microruntime.Module.time_evaluator)."""
        if self._runtime is None:
            raise AttributeError(f"Module[{self.type_key}] cannot run here: nothing to time")
        return self._runtime.time_evaluator(func_name, dev, *args, **kwargs)

    @property
    def imported_modules(self):
        """The modules this one imports: as loaded in this process, except that a device module
        of a GPU build is its Python-side object (source and code without a driver; it loads
        into the runtime on first use)."""
        if not any(getattr(m, "get_source", None) and isinstance(m, SerializedModule)
                   for m in self._imports):
            return self._runtime.imported_modules if self._runtime is not None else []
        out = []
        for m in self._imports:
            if isinstance(m, SerializedModule) and hasattr(m, "get_source"):
                out.append(m)
            elif isinstance(m, (RuntimeModule, SerializedModule)):
                out.append(m.runtime_module if m.runtime_module is not None else m)
            else:
                out.append(m)
        return out

    # ---- what it is --------------------------------------------------------------------
    @property
    def type_key(self):
        return self._target.kind.name

    kind = type_key

    @property
    def format(self):
        return "c" if self._target.kind.name == "c" else "ll"

    is_dso_exportable = True
    is_binary_serializable = False

    @property
    def is_runnable(self):
        """Whether it was loaded here (a cross-compiled module is only exported)."""
        return self._runtime is not None

    def get_property_mask(self):
        """Classic TVM's property bits: 1 binary serializable, 2 runnable, 4 DSO exportable."""
        return property_mask(self)

    @property
    def object_file(self) -> str:
        """The host object file (position-independent relocatable .o)."""
        return self._artifact.object_file

    @property
    def imports(self) -> List[object]:
        """The imported modules as given to import_module (RuntimeModule, SerializedModule or
        microruntime.Module)."""
        return list(self._imports)

    def get_source(self, fmt=""):
        """The generated source in format `fmt` ("c", "ll", "asm"; "" = the first), or that of
        an imported device module ("cuda", "cu", "ptx", "cl", "opencl", "metal")."""
        sources = self._artifact.sources
        if fmt in sources:
            return sources[fmt]
        if fmt == "" and sources:
            return next(iter(sources.values()))
        have = sorted(sources)
        for m in self._imports:
            get = getattr(m, "get_source", None)
            if isinstance(m, SerializedModule) and get is not None:
                try:
                    return get(fmt)
                except ValueError:
                    have.append(m.kind)
        have = ", ".join(have) or "none"
        raise ValueError(f"Module[{self.type_key}] has no source in format {fmt!r} "
                         f"(available: {have})")

    inspect_source = get_source

    # ---- imports -----------------------------------------------------------------------
    def import_module(self, module):
        """Adds `module` (RuntimeModule, SerializedModule, or a microruntime.Module) to this
        module's imports; it is also imported into the loaded runtime module when it has one
        here (a SerializedModule has one when its kind's loader is registered; a static library
        has none: it is only linked on export)."""
        import microruntime

        if not isinstance(module, (RuntimeModule, SerializedModule, microruntime.Module)):
            raise TypeError(f"import_module expects a module, not {type(module).__name__}")
        if module is self or (isinstance(module, RuntimeModule) and self in module._tree()):
            raise ValueError("import_module would make an import cycle")
        runtime = module if isinstance(module, microruntime.Module) else module.runtime_module
        if self._runtime is not None and runtime is not None and runtime.handle is not None:
            self._runtime.import_module(runtime)
        self._imports.append(module)

    def _tree(self) -> List["RuntimeModule"]:
        """This module and every RuntimeModule it imports (depth first, each once)."""
        out, stack = [], [self]
        while stack:
            mod = stack.pop()
            if any(mod is seen for seen in out):
                continue
            out.append(mod)
            stack.extend(reversed([m for m in mod._imports if isinstance(m, RuntimeModule)]))
        return out

    def _library_parts(self, root: Optional[SerializedModule] = None) -> LibraryParts:
        """Host code to link, plus the blob of the other imports: module 0 is the library
        ("_lib"), which imports every SerializedModule that any of its host modules imports.
        With `root` (a GraphExecutorFactory, say), module 0 is `root`, importing the library."""
        hosts, statics, serialized = [], [], []
        for mod in self._tree():
            hosts.append(HostCode(mod._artifact, mod._target, mod._cross))
            for imp in mod._imports:
                if isinstance(imp, SerializedModule):
                    if not any(imp is s for s in serialized):
                        serialized.append(imp)
                elif not isinstance(imp, RuntimeModule):
                    statics.append(_static_object(imp))
        blob = None
        if serialized or root is not None:
            head = [(root.kind, root.payload)] if root is not None else []
            modules = head + [("_lib", None)] + [(s.kind, s.payload) for s in serialized]
            lib_index = len(head)
            # CSR import tree: root -> _lib (when there is a root), _lib -> each serialized.
            children = [lib_index] * lib_index + list(range(lib_index + 1, len(modules)))
            indptr = [0] + [lib_index] * lib_index + [len(children)] * (len(serialized) + 1)
            blob = pack_library_bin(modules, indptr, children)
        return LibraryParts(hosts, self._system_lib_prefix, statics, blob)

    # ---- save, export ------------------------------------------------------------------
    def save(self, file_name, fmt=""):
        """Saves this module's host code alone: `.o` (the object) or its source (`.c`, `.ll`,
        `.s`). `microruntime.load_module("k.o")` links and loads a saved object."""
        file_name = os.fspath(file_name)
        fmt = fmt or os.path.splitext(file_name)[1].lstrip(".")
        if fmt in ("o", "obj"):
            shutil.copyfile(self._artifact.object_file, file_name)
            return
        save_source(self._artifact, file_name, {"s": "asm"}.get(fmt, fmt))

    def export_library(self, file_name, fcompile=None, addons=None, workspace_dir=None,
                       **kwargs):
        """Exports this module and its imports as one library (`.so`, `.tar`, `.o`, `.a` for a
        system library, or the source `.c`/`.ll`/`.s`); see compiler/export.py."""
        del addons
        return export_library(self._library_parts(), file_name, fcompile, workspace_dir,
                              **kwargs)

    def __repr__(self):
        return f"Module({self.type_key}, {self._artifact.object_file})"


def _static_object(module) -> str:
    keep = getattr(module, "_keep", None) or {}
    if "static_path" not in keep:
        raise TargetError(f"cannot export imported Module[{module.type_key}]: only host code, "
                          "static libraries (microruntime.load_static_library) and serialized "
                          "modules (SerializedModule) can be packed into a library")
    return keep["static_path"]
