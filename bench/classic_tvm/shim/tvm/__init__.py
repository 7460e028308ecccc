"""`tvm` as a set of aliases of Kiln's packages, so that classic TVM code runs unchanged.

Each `tvm.<name>` module is the Kiln module of the table below (a submodule `tvm.<name>.<sub>`
is `<kiln module>.<sub>`); each top-level name of `tvm` is the Kiln object of the same name.
Nothing here adds behaviour: what a classic test needs and Kiln lacks fails as it would.
"""
import importlib
import importlib.abc
import importlib.util
import sys

import compiler
import compiler.testing
import microruntime

MODULES = {
    "tvm.te": "compiler.te",
    "tvm.tir": "compiler.tir",
    "tvm.ir": "compiler.ir",
    "tvm.container": "compiler.ir.container",
    "tvm.arith": "compiler.arith",
    "tvm.target": "compiler.target",
    "tvm.transform": "compiler.transform",
    "tvm.driver": "compiler.driver",
    "tvm.driver.build_module": "compiler.driver",
    "tvm.topi": "compiler.topi",
    "tvm.relay": "compiler.relay",
    "tvm.relax": "compiler.relax",
    "tvm.autotvm": "compiler.autotvm",
    "tvm.contrib": "compiler.contrib",
    "tvm.contrib.graph_executor": "microruntime.graph_executor",
    "tvm.testing": "compiler.testing",
    "tvm.runtime": "microruntime",
    "tvm.rpc": "microruntime.rpc",
    "tvm._ffi": "microruntime",
    "tvm.script": "compiler.script",
    "tvm.nd": "microruntime.nd",
    "tvm.error": "compiler.ir.errors",
}


def _kiln_name(fullname):
    """The Kiln module that `tvm.<...>` names, or None."""
    if fullname in MODULES:
        return MODULES[fullname]
    head, _, tail = fullname.rpartition(".")
    parent = _kiln_name(head) if head.startswith("tvm.") else None
    return f"{parent}.{tail}" if parent else None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `tvm.<...>` as the Kiln module of the same place."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("tvm."):
            return None
        kiln = _kiln_name(fullname)
        if kiln is None or importlib.util.find_spec(kiln) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(kiln))


sys.meta_path.insert(0, _AliasFinder())
for _name, _kiln in MODULES.items():  # eagerly: a Kiln module that is no package has aliases
    sys.modules[_name] = importlib.import_module(_kiln)  # of its own (tvm.driver.build_module)


def __getattr__(name):
    if f"tvm.{name}" in MODULES:
        return importlib.import_module(f"tvm.{name}")
    raise AttributeError(f"module 'tvm' has no attribute {name!r}")


build = compiler.build
lower = compiler.lower
IRModule = compiler.ir.IRModule
TVMError = RuntimeError

cpu = microruntime.cpu
cuda = microruntime.cuda
gpu = microruntime.gpu
opencl = microruntime.opencl
cl = microruntime.cl
vulkan = microruntime.vulkan
metal = microruntime.metal
rocm = microruntime.rocm
ext_dev = microruntime.ext_dev
device = microruntime.device
register_func = microruntime.register_func
register_extension = microruntime.register_extension
get_global_func = microruntime.get_global_func
convert = microruntime.convert
DataType = microruntime.DataType
