"""AOTExecutorFactoryModule: what `relay.build(..., executor=Executor("aot"))` returns.

    factory = relay.build(mod, "llvm", params=params, executor=Executor("aot"))
    aot = microruntime.aot_executor.AotModule(factory["default"](microruntime.cpu()))
    factory.export_library("model.so")      # or model.a for a "--system-lib" target
    factory.export_header("tvmgen_default.h")

It is the library's root module: its host code is the generated run file (compiler/relax/
backend/aot/codegen.py), importing the kernel library, so `export_library` links both (a `.a`
as one object) and the weights travel inside as constant data. Here it is loaded as one
library (run file and kernels linked together); a cross-compiled build only exports.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Dict, Optional

from ....codegen import HostArtifact
from ....codegen.c_family.c import compile_flags
from ....contrib import cc
from ....ir.errors import TargetError
from ....runtime_module import RuntimeModule
from ....target import Target
from .codegen import header_source, run_source
from .plan import AotPlan


def _loaded(objects, workdir: str):
    import microruntime

    so_path = cc.create_shared(os.path.join(workdir, "aot.so"), objects,
                               options=cc.KERNEL_LIBRARY_OPTIONS)
    return microruntime.load_module(so_path)


class AOTExecutorFactoryModule(RuntimeModule):
    """The run function, header and weights of a model over its kernel library (see the module
    doc), with TVM's API: `factory[mod_name](dev)`, `get_lib()`, `get_params()`,
    `get_executor_config()` (the metadata), `export_library(path)`; and `get_header()`,
    `export_header(path)`, `manifest` (inputs, outputs and "arena_bytes": the workspace)."""

    def __init__(self, plan: AotPlan, lib: RuntimeModule, target: Target):
        if not isinstance(lib, RuntimeModule):
            raise TargetError(f"lib must be the kernel module compiler.build returned, not "
                              f"{type(lib).__name__}")
        self.plan = plan
        self.libmod_name = plan.mod_name
        self.lib = lib
        system_lib = target.system_lib_prefix is not None
        source = run_source(plan, system_lib)
        workdir = tempfile.mkdtemp(prefix="kiln_aot_")
        try:
            path = os.path.join(workdir, f"tvmgen_{plan.mod_name}.c")
            with open(path, "w") as f:
                f.write(source)
            obj = cc.compile_source(path, os.path.join(workdir, "aot.o"), compile_flags(target))
            runtime = None
            if lib.runtime_module is not None:
                runtime = _loaded([obj, lib.object_file], workdir)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        super().__init__(runtime, HostArtifact(obj, {"c": source}), target,
                         target.system_lib_prefix, cross=lib.runtime_module is None)
        self.import_module(lib)   # linked with the run file on export
        self.workspace_bytes = plan.workspace_bytes
        weakref.finalize(self, shutil.rmtree, workdir, True)

    # ---- TVM's API -----------------------------------------------------------------------
    def get_lib(self) -> RuntimeModule:
        return self.lib

    def get_params(self) -> Dict[str, object]:
        return dict(self.plan.params)

    def get_executor_config(self) -> dict:
        return self.plan.metadata()

    @property
    def module(self):
        """The loaded library (run file and kernels), which AotModule wraps."""
        if self.runtime_module is None:
            raise TargetError("this model was compiled for another architecture: it can only "
                              "be exported (export_library), not run here")
        return self.runtime_module

    def __getitem__(self, name):
        if name == self.libmod_name:
            return self._create
        return super().__getitem__(name)

    def __call__(self, *devices):
        return self._create(*devices)

    def _create(self, *devices):
        for dev in devices:
            if getattr(dev, "device_type", None) != 1:
                raise TargetError(f"the AOT executor runs on the CPU, not on {dev!r}: pass "
                                  "microruntime.cpu()")
        return self.module

    # ---- the C interface -----------------------------------------------------------------
    def get_header(self) -> str:
        """The text of tvmgen_<name>.h."""
        return header_source(self.plan)

    def export_header(self, path: Optional[str] = None) -> str:
        """Writes tvmgen_<name>.h (into `path`: a file, or a folder); returns its path."""
        path = path or f"tvmgen_{self.plan.mod_name}.h"
        if os.path.isdir(path):
            path = os.path.join(path, f"tvmgen_{self.plan.mod_name}.h")
        with open(path, "w") as f:
            f.write(self.get_header())
        return path

    @property
    def manifest(self) -> dict:
        """Inputs and outputs (name, shape, dtype), the kernels, and the workspace's bytes as
        "arena_bytes" (what compiler.relay.test_vectors reads)."""
        meta = self.plan.metadata()
        return {"inputs": meta["inputs"], "outputs": meta["outputs"],
                "params": list(self.plan.params), "kernels": self.plan.kernels,
                "workspace_bytes": self.plan.kernel_workspace_bytes,
                "arena_bytes": self.plan.workspace_bytes}

    def __repr__(self):
        return (f"AOTExecutorFactoryModule({self.plan.mod_name!r}, {len(self.plan.params)} "
                f"params, {len(self.plan.kernels)} kernels, workspace "
                f"{self.plan.workspace_bytes} bytes)")


__all__ = ["AOTExecutorFactoryModule"]
