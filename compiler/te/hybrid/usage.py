"""Where each local name of a hybrid script is declared and how it is used, found before
parsing: a name is declared by its first store (an assignment), in the innermost loop (or the
function) around it; whether it is stored again decides whether it is a constant or a variable
held in a one-element buffer; the loop it is declared in is where its storage ends.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Set

from ...ir.errors import HybridScriptError


@dataclass
class Usage:
    """`decl`: the Name node of the first store; `scope`: the For or FunctionDef node the name is
    declared in; `stored_again`: whether a later statement stores to it."""

    decl: ast.Name
    scope: ast.AST
    stored_again: bool = False
    contexts: Set[type] = field(default_factory=set)


def fail(node: ast.AST, message: str) -> HybridScriptError:
    line = getattr(node, "lineno", None)
    where = f" (line {line})" if line is not None else ""
    return HybridScriptError(f"hybrid script: {message}{where}")


class _Usage(ast.NodeVisitor):
    def __init__(self, closure: Dict[str, object]):
        self.closure = closure
        self.args: Set[str] = set()
        self.scopes: List[ast.AST] = []
        self.status: Dict[str, Usage] = {}
        self.in_aug_assign = False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scopes.append(node)
        self.args = {a.arg for a in node.args.args}
        for stmt in node.body:
            self.visit(stmt)

    def visit_For(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name):
            raise fail(node, "a loop's target must be one name")
        self.visit(node.iter)
        self.scopes.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            raise fail(node, "only functions called by name are supported (not "
                             f"{ast.unparse(node.func)})")
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.in_aug_assign = True
        self.generic_visit(node)
        self.in_aug_assign = False

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        loops = [s.target.id for s in self.scopes if isinstance(s, ast.For)]
        if name in self.args or name in loops:
            if isinstance(node.ctx, ast.Store) and name in loops:
                raise fail(node, f"the loop variable '{name}' cannot be assigned")
            return
        found = self.status.get(name)
        if found is None:
            if name in self.closure and isinstance(node.ctx, ast.Load):
                return
            if not isinstance(node.ctx, ast.Store):
                raise fail(node, f"'{name}' is used before it is assigned")
            if self.in_aug_assign:
                raise fail(node, f"the first store to '{name}' cannot be an augmented "
                                 "assignment (+=, ...)")
            self.status[name] = Usage(node, self.scopes[-1])
            return
        found.contexts.add(type(node.ctx))
        if isinstance(node.ctx, ast.Store):
            found.stored_again = True
        if found.scope not in self.scopes:
            raise fail(node, f"'{name}' is used outside the loop it is declared in")


def variable_usage(root: ast.FunctionDef, closure: Dict[str, object]) -> Dict[str, Usage]:
    """name -> Usage for every local name the function assigns."""
    v = _Usage(closure)
    v.visit(root)
    return v.status
