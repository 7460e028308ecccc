"""Printing, shared by the IR levels: each level registers the printer of its node classes;
`to_text(node)` dispatches on the node's class (its nearest registered base)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

# printer(node, name) -> text; `name` is the function's name when printing a module's function.
Printer = Callable[[Any, Optional[str]], str]
_PRINTERS: Dict[type, Printer] = {}


def register_printer(cls: type, printer: Printer) -> None:
    """Makes `printer(node, name)` print instances of `cls` (and its subclasses)."""
    _PRINTERS[cls] = printer


def to_text(node: Any, name: Optional[str] = None) -> str:
    """The readable text of `node`, by the printer registered for its class."""
    for cls in type(node).__mro__:
        printer = _PRINTERS.get(cls)
        if printer is not None:
            return printer(node, name)
    return repr(node)
