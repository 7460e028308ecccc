"""Kiln's compiler: tensor expressions and schedules, lowering, code generation and build.

It runs offline, on a workstation, and produces libraries the microruntime loads:

    from compiler import te, lower, build
"""
from . import ir, te  # noqa: F401
from .driver import build, lower  # noqa: F401
from .ir.errors import (
    BuildError,
    CompilerError,
    InternalError,
    ScheduleError,
    TargetError,
    UnsupportedOpError,
)
