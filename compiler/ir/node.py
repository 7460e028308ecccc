"""The base of every IR node, at every level (loop IR, graph IR).

Nodes are immutable values; identity matters (`same_as`), structure is compared with
`compiler.ir.structural_equal`. `str(node)` prints it with the printer its IR level registered
(`compiler.ir.printer.register_printer`). A node passed to a runtime function travels as itself
(microruntime.OpaqueValue): a Python callback receives the same node, and one it returns comes
back as that node.
"""
from __future__ import annotations

from typing import Any

from microruntime.object import OpaqueValue

from .printer import to_text


class Node(OpaqueValue):
    """Base of every IR node (expressions, statements, buffers, functions, modules)."""

    __slots__ = ()

    def same_as(self, other: Any) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return to_text(self)
