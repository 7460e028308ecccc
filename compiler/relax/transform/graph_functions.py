"""map_graph_functions: a pass's rewrite applied to each graph-level function of a module (the
relax Functions that are not primitive, i.e. not kernels-to-be); primitive functions and
PrimFuncs are left as they are."""
from __future__ import annotations

from typing import Callable

from ...ir.module import IRModule
from .. import expr as X


def is_graph_function(func) -> bool:
    return isinstance(func, X.Function) and not func.attrs.get("Primitive")


def map_graph_functions(mod: IRModule, rewrite: Callable[[X.Function], X.Function]) -> IRModule:
    """`mod` with `rewrite(f)` in place of each graph-level function f."""
    return mod.with_functions({name: rewrite(func) if is_graph_function(func) else func
                               for name, func in mod.items()})
