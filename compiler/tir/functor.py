"""Visitors and mutators over the IR, driven by the nodes' dataclass fields.

`IRVisitor.visit(node)` dispatches to `visit_<ClassName>` when defined, else visits every child
field (expressions, statements, buffers, tuples of them). `IRMutator` does the same and rebuilds
a node only when a child changed, so an untouched subtree is returned as the same object.
Chains of statements that wrap one body (LetStmt, AssertStmt, AttrStmt: a packed function's
argument checks nest one per check) are walked in a loop, not by recursion, so their length is
not bounded by Python's recursion limit; a subclass that handles one of these kinds itself
should walk the chain the same way (`chain_of` splits a chain into its heads and its tail).
Buffers are visited by `visit_buffer` (mutators may remap them); IterVar/Range/CommReducer are
leaves unless a subclass handles them. The `a == b` / `a != b` objects of Python operators
(EqualOp / NotEqualOp, not dataclasses) are traversed as the EQ / NE nodes they stand for.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ..ir.fields import child_field_names, field_names
from .block import BufferRegion, MatchBufferRegion
from .buffer import Buffer
from .expr import (
    BinaryOp,
    Broadcast,
    BufferLoad,
    EqualOp,
    Let,
    Not,
    NotEqualOp,
    PrimExpr,
    Ramp,
    Range,
    Select,
    Var,
    convert,
)
from .function import PrimFunc
from .stmt import Allocate, AssertStmt, AttrStmt, BufferStore, For, LetStmt, Stmt

_CHILD_TYPES = (PrimExpr, Stmt, Buffer)

# Parts of a block that hold expressions but are neither expressions nor statements: walked
# through their fields like a node (a mutator may return a new one).
_REGION_TYPES = (BufferRegion, MatchBufferRegion, Range)

# Statements whose last field `body` is the one statement they wrap.
CHAIN_TYPES = (LetStmt, AssertStmt, AttrStmt)


def chain_of(stmt: Stmt, stop: Optional[Callable[[Stmt], bool]] = None):
    """(heads, tail): the LetStmt/AssertStmt/AttrStmt nodes met going down `body` from `stmt`,
    outermost first, and the first statement that is not one of them (or for which `stop`
    is true, `stmt` itself excepted)."""
    heads = []
    while isinstance(stmt, CHAIN_TYPES) and not (heads and stop is not None and stop(stmt)):
        heads.append(stmt)
        stmt = stmt.body
    return heads, stmt


def _stops_chain(functor: Any, base: type) -> Callable[[Stmt], bool]:
    """Where a generic walk down a chain must hand over to `visit`: at a kind the functor
    handles, or everywhere when the functor overrides `visit` itself."""
    if type(functor).visit is not base.visit:
        return lambda s: True
    return lambda s: _handler(functor, type(s)) is not None


def _head_fields(cls: type) -> tuple:
    """The child fields of a chain statement but its body."""
    return tuple(n for n in child_field_names(cls) if n != "body")


# What a generic walk does with a value of a class (`_value_kind`, cached per class).
_BUFFER, _NODE, _TUPLE, _OTHER = range(4)
_VALUE_KINDS: Dict[type, int] = {}
# How a generic walk takes a node of a class apart (`_node_plan`, cached per class): one of
# these, or the tuple of its child field names.
_AS_BUFFER, _AS_OBJECT, _AS_CHAIN = "buffer", "object", "chain"
_NODE_PLANS: Dict[type, Any] = {}


def _value_kind(cls: type) -> int:
    kind = _VALUE_KINDS.get(cls)
    if kind is None:
        kind = _VALUE_KINDS[cls] = (
            _BUFFER if issubclass(cls, Buffer)
            else _NODE if issubclass(cls, (PrimExpr, Stmt) + _REGION_TYPES)
            else _TUPLE if issubclass(cls, tuple) else _OTHER)
    return kind


def _node_plan(cls: type) -> Any:
    plan = _NODE_PLANS.get(cls)
    if plan is None:
        plan = _NODE_PLANS[cls] = (
            _AS_BUFFER if issubclass(cls, Buffer)
            else _AS_OBJECT if issubclass(cls, (EqualOp, NotEqualOp))
            else _AS_CHAIN if issubclass(cls, CHAIN_TYPES) else child_field_names(cls))
    return plan


def _handler(functor: Any, cls: type) -> Optional[Callable]:
    """The `visit_<cls name>` function of the functor's class (None if it has none), cached
    per functor class: looked up once, not once per node."""
    owner = type(functor)
    table = owner.__dict__.get("_handlers")
    if table is None:
        table = {}
        owner._handlers = table
    try:
        return table[cls]
    except KeyError:
        fn = table[cls] = getattr(owner, "visit_" + cls.__name__, None)
        return fn


class IRVisitor:
    """Read-only traversal. Override `visit_<ClassName>`; call `self.generic_visit(node)` to
    continue into the children."""

    def visit(self, node: Any) -> None:
        method = _handler(self, type(node))
        if method is not None:
            method(self, node)
        else:
            self.generic_visit(node)

    def visit_buffer(self, buffer: Buffer) -> None:
        """Buffers' shapes and strides are not visited unless a subclass asks."""

    def generic_visit(self, node: Any) -> None:
        plan = _NODE_PLANS.get(type(node))
        if plan is None:
            plan = _node_plan(type(node))
        if plan.__class__ is tuple:
            for name in plan:
                self._visit_value(getattr(node, name))
        elif plan is _AS_BUFFER:
            self.visit_buffer(node)
        elif plan is _AS_OBJECT:
            self.visit(node.asobject())
        else:
            self._visit_chain(node)

    def _visit_chain(self, node: Stmt) -> None:
        """generic_visit of a chain: the heads that no `visit_<kind>` handles in a loop, then
        the rest through `visit`."""
        heads, tail = chain_of(node, _stops_chain(self, IRVisitor))
        for head in heads:
            self.visit_head(head)
        self.visit(tail)

    def visit_head(self, head: Stmt) -> None:
        """Visits the fields of a chain statement but its body."""
        for name in _head_fields(type(head)):
            self._visit_value(getattr(head, name))

    def _visit_value(self, value: Any) -> None:
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _NODE:
            self.visit(value)
        elif kind == _BUFFER:
            self.visit_buffer(value)
        elif kind == _TUPLE:
            for v in value:
                self._visit_value(v)


class IRMutator:
    """Rewriting traversal. Override `visit_<ClassName>` returning the new node; call
    `self.generic_visit(node)` to rewrite the children first."""

    def visit(self, node: Any) -> Any:
        method = _handler(self, type(node))
        if method is not None:
            return method(self, node)
        return self.generic_visit(node)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return buffer

    def generic_visit(self, node: Any) -> Any:
        plan = _NODE_PLANS.get(type(node))
        if plan is None:
            plan = _node_plan(type(node))
        if plan.__class__ is tuple:
            changes: Optional[Dict[str, Any]] = None
            for name in plan:
                old = getattr(node, name)
                new = self._visit_value(old)
                if new is not old:
                    if changes is None:
                        changes = {}
                    changes[name] = new
            return node if changes is None else rebuild(node, changes)
        if plan is _AS_BUFFER:
            return self.visit_buffer(node)
        if plan is _AS_OBJECT:
            obj = node.asobject()
            new = self.visit(obj)
            return node if new is obj else new
        return self._mutate_chain(node)

    def _mutate_chain(self, node: Stmt) -> Stmt:
        """generic_visit of a chain: the heads that no `visit_<kind>` handles in a loop (outermost
        first), the rest through `visit`, then the heads rebuilt innermost first."""
        heads, tail = chain_of(node, _stops_chain(self, IRMutator))
        changes = [self.mutate_head(head) for head in heads]
        return rebuild_chain(heads, changes, self.visit(tail))

    def mutate_head(self, head: Stmt) -> Dict[str, Any]:
        """The new values of the fields of a chain statement but its body, by name, for the
        fields that changed."""
        changes: Dict[str, Any] = {}
        for name in _head_fields(type(head)):
            old = getattr(head, name)
            new = self._visit_value(old)
            if new is not old:
                changes[name] = new
        return changes

    def _visit_value(self, value: Any) -> Any:
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _NODE:
            return self.visit(value)
        if kind == _BUFFER:
            return self.visit_buffer(value)
        if kind == _TUPLE:
            new = tuple(self._visit_value(v) for v in value)
            if all(a is b for a, b in zip(new, value)):
                return value
            return new
        return value

    def visit_func(self, func: PrimFunc) -> PrimFunc:
        body = self.visit(func.body)
        return func if body is func.body else func.with_body(body)


def rebuild_chain(heads: List[Stmt], changes: List[Optional[Dict[str, Any]]],
                  body: Stmt) -> Stmt:
    """The chain `heads` (outermost first) rebuilt around `body`, innermost first: each head
    with its `changes` (a dict of new field values; None drops the head), the same object when
    neither its fields nor its body changed."""
    for head, change in zip(reversed(heads), reversed(changes)):
        if change is None:
            continue
        if body is not head.body:
            change = dict(change, body=body)
        body = rebuild(head, change) if change else head
    return body


def rebuild(node: Any, changes: Dict[str, Any]) -> Any:
    """A copy of `node` with some fields replaced; derived dtypes are recomputed for operators
    whose dtype follows their operands."""

    kwargs = {name: changes.get(name, getattr(node, name)) for name in field_names(type(node))}
    if isinstance(node, (BinaryOp, Not, Select, Let, Ramp, Broadcast, BufferLoad)) \
            and "dtype" not in changes:
        kwargs["dtype"] = None
    return type(node)(**kwargs)


class _FuncVisitor(IRVisitor):
    def __init__(self, fn: Callable[[Any], None]):
        self.fn = fn

    def visit(self, node: Any) -> None:
        if isinstance(node, CHAIN_TYPES):
            heads, tail = chain_of(node)
            for head in heads:
                self.visit_head(head)
            self.visit(tail)
            for head in reversed(heads):
                self.fn(head)
            return
        self.generic_visit(node)
        self.fn(node)


def post_order_visit(node: Any, fn: Callable[[Any], None]) -> None:
    """Calls `fn` on every expression and statement under `node`, children first."""
    _FuncVisitor(fn).visit(node)


class _Substitute(IRMutator):
    def __init__(self, vmap: Dict[Var, PrimExpr]):
        self.vmap = vmap

    def visit_Var(self, v: Var) -> PrimExpr:
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var


def substitute(node: Any, vmap: Dict[Var, Any]) -> Any:
    """`node` with every variable in `vmap` replaced (Vars keyed by identity)."""
    if not vmap:
        return node

    return _Substitute({k: convert(v) for k, v in vmap.items()}).visit(node)


def collect_vars(node: Any) -> List[Var]:
    """Every distinct Var used under `node`, in first-use order."""
    seen: Dict[int, Var] = {}

    def fn(n):
        if isinstance(n, Var) and id(n) not in seen:
            seen[id(n)] = n

    post_order_visit(node, fn)
    return list(seen.values())


def free_vars(stmt: Stmt, defined: Optional[List[Var]] = None) -> List[Var]:
    """Vars used under `stmt` but not defined inside it (loop vars, lets, allocations), in
    first-use order; Buffer data vars of loads/stores count as uses."""

    bound = {id(v) for v in (defined or [])}
    used: Dict[int, Var] = {}

    class V(IRVisitor):
        def visit_Var(self, v):
            if id(v) not in bound and id(v) not in used:
                used[id(v)] = v

        visit_SizeVar = visit_Var

        def _def(self, v):
            bound.add(id(v))

        def visit_For(self, s):
            self._def(s.loop_var)
            self.generic_visit(s)

        def visit_chain(self, s):
            heads, tail = chain_of(s)
            for h in heads:
                if isinstance(h, LetStmt):
                    self.visit(h.value)
                    self._def(h.var)
                else:
                    self.visit_head(h)
            self.visit(tail)

        visit_LetStmt = visit_AssertStmt = visit_AttrStmt = visit_chain

        def visit_Let(self, e):
            self.visit(e.value)
            self._def(e.var)
            self.visit(e.body)

        def visit_Allocate(self, s):
            self._def(s.buffer.data)
            for e in s.buffer.shape:
                self.visit(e)
            self.visit(s.body)

        def visit_BufferLoad(self, e):
            self.visit_Var(e.buffer.data)
            self.generic_visit(e)

        def visit_BufferStore(self, s):
            self.visit_Var(s.buffer.data)
            self.generic_visit(s)

    V().visit(stmt)
    _ = (BufferLoad, Let, Allocate, BufferStore, For, LetStmt)
    return list(used.values())
