"""Helpers shared by the passes: apply a statement rewrite to every PrimFunc of a module."""
from __future__ import annotations

from typing import Callable

from ...ir.module import IRModule
from ..function import PrimFunc


def map_funcs(mod: IRModule, fn: Callable[[PrimFunc], PrimFunc]) -> IRModule:
    """Apply `fn` to every function; the same module comes back when nothing changed."""
    changed = False
    out = {}
    for name, f in mod.items():
        g = fn(f) if isinstance(f, PrimFunc) else f
        changed |= g is not f
        out[name] = g
    return mod.with_functions(out) if changed else mod
