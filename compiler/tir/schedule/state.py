"""StmtSRef: a reference to a block or loop of a scheduled function, with its parent."""
from __future__ import annotations

from typing import Dict, Optional

from ..block import Block, BlockRealize
from ..functor import IRVisitor
from ..stmt import For, Stmt


class StmtSRef:
    """A block or loop (`stmt`) of a schedule's function; `parent` is the reference of the
    nearest enclosing block or loop (None at the root)."""

    __slots__ = ("stmt", "parent", "seq_index")

    def __init__(self, stmt: Stmt, parent: Optional["StmtSRef"], seq_index: int = -1):
        self.stmt, self.parent, self.seq_index = stmt, parent, seq_index

    def __repr__(self) -> str:
        what = self.stmt.name_hint if isinstance(self.stmt, Block) else \
            getattr(self.stmt, "loop_var", "?")
        return f"StmtSRef({type(self.stmt).__name__} {what})"


def stmt_srefs(body: Stmt) -> Dict[int, StmtSRef]:
    """The references of every block and loop under `body`, by the id of their statement."""
    out: Dict[int, StmtSRef] = {}
    stack = [None]

    class V(IRVisitor):
        def enter(self, stmt, children):
            sref = StmtSRef(stmt, stack[-1])
            out[id(stmt)] = sref
            stack.append(sref)
            children()
            stack.pop()

        def visit_For(self, s: For):
            self.enter(s, lambda: self.generic_visit(s))

        def visit_Block(self, b: Block):
            self.enter(b, lambda: self.generic_visit(b))

        def visit_BlockRealize(self, s: BlockRealize):
            self.generic_visit(s)

    V().visit(body)
    return out
