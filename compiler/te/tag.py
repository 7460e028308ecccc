"""`te.tag_scope(tag)`: the tag of the operations declared inside it, as TVM's tag scope.

    with te.tag_scope("matmul"):
        C = te.compute(...)            # C.op.tag == "matmul"

    @te.tag_scope(tag="elemwise")
    def relu(x):
        return te.compute(x.shape, lambda *i: te.max(x(*i), 0.0))

`te.compute` and `te.extern` take the tag of the current scope when they are given none; giving
a tag inside a scope, or opening a scope inside another, is a `NestedTagError` (TVM does not nest
them either, and raises a ValueError: this error is one too). A scope that tagged nothing warns
when it closes.
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Optional

from ..ir.errors import IRError

_CURRENT = threading.local()


class NestedTagError(IRError, ValueError):
    """A tag scope opened inside another, or a tag given inside a scope."""


class TagScope:
    """A tag scope: a context manager, and a decorator that runs the function inside it."""

    def __init__(self, tag: str):
        self.tag = tag
        self.accessed = False

    @staticmethod
    def get_current() -> Optional["TagScope"]:
        """The open scope (marked as used), or None."""
        scope = getattr(_CURRENT, "scope", None)
        if scope is not None:
            scope.accessed = True
        return scope

    def __enter__(self) -> "TagScope":
        outer = getattr(_CURRENT, "scope", None)
        if outer is not None:
            raise NestedTagError(f"tag_scope('{self.tag}') opened inside "
                                 f"tag_scope('{outer.tag}'); tag scopes do not nest, close the "
                                 "outer one first")
        _CURRENT.scope = self
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.scope = None
        if not self.accessed and exc[0] is None:
            warnings.warn(f"Tag '{self.tag}' declared via TagScope was not used.", stacklevel=2)

    def __call__(self, fdecl):
        @functools.wraps(fdecl)
        def tagged(*args, **kwargs):
            with self:
                return fdecl(*args, **kwargs)

        return tagged


def tag_scope(tag: str) -> TagScope:
    """The scope giving `tag` to every compute/extern declared inside it."""
    return TagScope(tag)


def scoped_tag(tag: str, what: str) -> str:
    """`tag`, or the current scope's tag when `tag` is empty (for compute / extern `what`)."""
    scope = TagScope.get_current()
    if scope is None:
        return tag
    if tag:
        raise NestedTagError(f"{what}: tag='{tag}' given inside tag_scope('{scope.tag}'); give "
                             "the tag one way only")
    return scope.tag
