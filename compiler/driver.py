"""The two entry points of the compiler, as in `tvm.lower` / `tvm.build`.

`lower(schedule | PrimFunc | IRModule, args, name, binds, simple_mode)` → IRModule (loop IR after
the pass pipeline of compiler/tir/pipeline.py); `build(...)` → a callable microruntime Module;
`schedule_to_module(schedule, args, name, binds)` → the IRModule before any pass.
"""
from .build import build
from .lower import lower, schedule_to_module

__all__ = ["lower", "build", "schedule_to_module"]
