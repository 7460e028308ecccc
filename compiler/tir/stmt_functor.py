"""Functions over statements and expressions with the names of `tvm.tir.stmt_functor`:
`ir_transform` (rewrite by callbacks), `post_order_visit`, `pre_order_visit`, `substitute`."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..ir.fields import child_field_names
from .expr import EqualOp, NotEqualOp, PrimExpr
from .functor import post_order_visit, rebuild, substitute
from .stmt import Stmt

__all__ = ["ir_transform", "post_order_visit", "pre_order_visit", "substitute"]


def _kind(node) -> str:
    return type(node).__name__


def _enabled(only_enable: Optional[Sequence[str]]):
    """The node kinds the callbacks see: every kind, or those named (`"tir.For"` or `"For"`)."""
    if only_enable is None:
        return None
    return {name.rpartition(".")[2] for name in only_enable}


def ir_transform(stmt, preorder: Optional[Callable], postorder: Optional[Callable],
                 only_enable: Optional[Sequence[str]] = None):
    """`stmt` rewritten node by node: `preorder(node)` first, and when it returns a node that
    node replaces the whole subtree; otherwise the children are rewritten, then
    `postorder(new node)` may return the replacement. A callback returning None keeps the node.
    `only_enable` limits the callbacks to those node kinds."""
    kinds = _enabled(only_enable)

    def visit(node):
        if isinstance(node, (EqualOp, NotEqualOp)):
            node = node.asobject()
        if not isinstance(node, (PrimExpr, Stmt)):
            return node
        called = kinds is None or _kind(node) in kinds
        if called and preorder is not None:
            replaced = preorder(node)
            if replaced is not None:
                return replaced
        changes = {}
        for name in child_field_names(type(node)):
            old = getattr(node, name)
            new = visit_value(old)
            if new is not old:
                changes[name] = new
        node = rebuild(node, changes) if changes else node
        if called and postorder is not None:
            replaced = postorder(node)
            if replaced is not None:
                return replaced
        return node

    def visit_value(value):
        if isinstance(value, tuple):
            new = tuple(visit_value(v) for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        return visit(value)

    return visit(stmt)


def pre_order_visit(node, fn: Callable[[Any], Any]) -> None:
    """Calls `fn` on every expression and statement under `node`, parents first; where `fn`
    returns False the node's children are skipped."""
    if isinstance(node, tuple):
        for item in node:
            pre_order_visit(item, fn)
        return
    if isinstance(node, (EqualOp, NotEqualOp)):
        node = node.asobject()
    if not isinstance(node, (PrimExpr, Stmt)) or fn(node) is False:
        return
    for name in child_field_names(type(node)):
        pre_order_visit(getattr(node, name), fn)
