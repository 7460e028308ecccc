"""Kiln's compiler: tensor expressions and schedules, lowering, code generation and build.

It runs offline, on a workstation, and produces libraries the microruntime loads:

    from compiler import te, lower, build

`compiler.relax` is the graph level (as tvm.relax). `compiler.transform.PassContext` holds the
options lower and build read (as tvm.transform).
"""
from . import instrument, ir, relax, runtime_globals, te, transform  # noqa: F401
from .driver import build, lower  # noqa: F401
from .ir.errors import (
    BuildError,
    CompilerError,
    InternalError,
    ScheduleError,
    TargetError,
    TypeInferenceError,
    UnsupportedOpError,
)
