"""The two entry points of the compiler, as in `tvm.lower` / `tvm.build`.

`lower(schedule | PrimFunc | IRModule, args, name, binds, simple_mode)` → IRModule (loop IR after
the pass pipeline of compiler/tir/pipeline.py); `build(...)` → a callable microruntime Module.
"""
from .build import build
from .lower import lower

__all__ = ["lower", "build"]
