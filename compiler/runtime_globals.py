"""The global functions the compiler registers in the runtime's registry, as TVM's compiler
library registers its own, so that runtime code reaches compiler behaviour by name:

- `node._const(value, dtype)`: the IR constant of a Python number (dtype None: int32 or int64
  for ints, float32 for floats, bool for bools); `microruntime.convert` of a number uses it.
- `ffi.Module.load_from_file.ll` and `.bc` (path, fmt): `microruntime.load_module` of a saved
  LLVM module (IR text or bitcode), compiled for this machine and loaded.
"""
from microruntime.packed_func import register_func

from .tir.expr import const

register_func("node._const", lambda value, dtype=None: const(value, dtype), override=True)


def _load_llvm_ir(path, fmt):
    from .codegen.llvm.load_ir import load_llvm_ir_file  # llvmlite only when one is loaded
    return load_llvm_ir_file(path, fmt)


for _fmt in ("ll", "bc"):
    register_func(f"ffi.Module.load_from_file.{_fmt}", _load_llvm_ir, override=True)
