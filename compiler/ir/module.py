"""IRModule: named functions of any IR level (loop-IR PrimFuncs, graph-level functions) plus
module attributes."""
from __future__ import annotations

from typing import Any, Dict, Iterator, Mapping, Optional

from .node import Node
from .printer import register_printer, to_text


class IRModule(Node):
    """Functions by name, plus module attributes (e.g. "system_lib_prefix").

    Treated as a value: passes return a new IRModule rather than editing one in place.
    """

    __slots__ = ("functions", "attrs")

    def __init__(self, functions: Optional[Mapping[str, Any]] = None,
                 attrs: Optional[Mapping[str, Any]] = None):
        self.functions: Dict[str, Any] = dict(functions or {})
        self.attrs: Dict[str, Any] = dict(attrs or {})

    def __getitem__(self, name: str) -> Any:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return self.functions.items()

    def with_functions(self, functions: Mapping[str, Any]) -> "IRModule":
        return IRModule(functions, self.attrs)

    def with_attr(self, key: str, value: Any) -> "IRModule":
        attrs = dict(self.attrs)
        attrs[key] = value
        return IRModule(self.functions, attrs)

    @staticmethod
    def from_expr(func: Any, name: str = "main") -> "IRModule":
        return IRModule({func.attrs.get("global_symbol", name): func})


def _module_text(mod: IRModule, name: Optional[str] = None) -> str:
    return "\n\n".join(to_text(func, fname) for fname, func in mod.items())


register_printer(IRModule, _module_text)
