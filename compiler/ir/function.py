"""PrimFunc (one low-level function) and IRModule (named functions plus module attributes)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

from .buffer import Buffer
from .expr import Node, Var
from .stmt import Stmt


@dataclass(frozen=True, eq=False, slots=True)
class PrimFunc(Node):
    """`params` are Vars; a param in `buffer_map` is a tensor argument bound to that Buffer.

    Common attrs: "global_symbol" (the exported name), "target" (a Target), "tir.noalias",
    "calling_conv" ("default" before make_packed_api, "packed" after, "device_kernel" for GPU
    kernels).
    """

    params: Tuple[Var, ...]
    body: Stmt
    buffer_map: Tuple[Tuple[Var, Buffer], ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def buffer_of(self, param: Var) -> Optional[Buffer]:
        for p, b in self.buffer_map:
            if p is param:
                return b
        return None

    def with_body(self, body: Stmt) -> "PrimFunc":
        return PrimFunc(self.params, body, self.buffer_map, self.attrs)

    def with_attr(self, key: str, value: Any) -> "PrimFunc":
        attrs = dict(self.attrs)
        attrs[key] = value
        return PrimFunc(self.params, self.body, self.buffer_map, attrs)


class IRModule(Node):
    """Functions by name, plus module attributes (e.g. "system_lib_prefix").

    Treated as a value: passes return a new IRModule rather than editing one in place.
    """

    __slots__ = ("functions", "attrs")

    def __init__(self, functions: Optional[Mapping[str, PrimFunc]] = None,
                 attrs: Optional[Mapping[str, Any]] = None):
        self.functions: Dict[str, PrimFunc] = dict(functions or {})
        self.attrs: Dict[str, Any] = dict(attrs or {})

    def __getitem__(self, name: str) -> PrimFunc:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return self.functions.items()

    def with_functions(self, functions: Mapping[str, PrimFunc]) -> "IRModule":
        return IRModule(functions, self.attrs)

    def with_attr(self, key: str, value: Any) -> "IRModule":
        attrs = dict(self.attrs)
        attrs[key] = value
        return IRModule(self.functions, attrs)

    @staticmethod
    def from_expr(func: PrimFunc, name: str = "main") -> "IRModule":
        return IRModule({func.attrs.get("global_symbol", name): func})
