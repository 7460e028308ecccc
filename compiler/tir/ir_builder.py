"""Building loop IR by hand, as TVM's `tvm.tir.ir_builder`: statements are emitted in order
into nested scopes (`with ib.for_range(...)`, `with ib.if_scope(...)`, ...) and `ib.get()`
returns the whole statement. Typical use is the body of `te.extern`:

    def vector_add(A, B, C):
        ib = tir.ir_builder.create()
        a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
        with ib.for_range(0, A.shape[0], name="i") as i:
            c[i] = a[i] + b[i]
        return ib.get()

    C = te.extern(A.shape, [A, B], lambda ins, outs: vector_add(*ins, outs[0]))

A scope that wraps what follows it (`allocate`, `let`, `scope_attr`) is emitted as a callable
taking the rest of the enclosing scope as its body, as in TVM.

Kiln's IR differs from TVM's in two places the builder hides: every memory access is a
BufferLoad/BufferStore of a Buffer (a `BufferVar` indexed with one linear index on an N-d buffer
unravels it over the shape, so the access keeps the buffer's strides), and loops start at 0
(`for_range(begin, end)` makes a loop of `end - begin` iterations whose variable `v` the body
sees as `v + begin`). `scope_attr(iv, "thread_extent", n)` on a thread IterVar becomes a
THREAD_BINDING loop, the form the host/device split reads.
"""
from __future__ import annotations

from typing import Callable, List, Union

from ..arith import simplify
from ..ir.dtype import DTypeLike, as_dtype
from ..ir.errors import IRError
from . import expr as E
from .buffer import Buffer, decl_buffer
from .functor import substitute
from .stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    While,
    seq,
)

_KINDS = {
    "serial": ForKind.SERIAL,
    "parallel": ForKind.PARALLEL,
    "vectorize": ForKind.VECTORIZED,
    "unroll": ForKind.UNROLLED,
}

Emitted = Union[Stmt, Callable[[Stmt], Stmt]]


class WithScope:
    """A scope of the builder: `__enter__` gives `enter_value`, `__exit__` closes the scope."""

    def __init__(self, enter_value, exit_cb: Callable[[], None]):
        self._enter_value = enter_value
        self._exit_cb = exit_cb

    def __enter__(self):
        return self._enter_value

    def __exit__(self, ptype, value, trace):
        if ptype is None:
            self._exit_cb()


def _unravel(index: E.PrimExpr, shape) -> List[E.PrimExpr]:
    """The N-d index of the row-major linear `index` into `shape`."""
    out = []
    for extent in reversed(shape[1:]):
        out.append(index % extent)
        index = index // extent
    out.append(index)
    return list(reversed(out))


def _ravel(index, shape) -> E.PrimExpr:
    """The row-major linear index of the N-d `index` into `shape`."""
    linear = index[0]
    for i, extent in zip(index[1:], shape[1:]):
        linear = linear * extent + i
    return linear


class BufferVar:
    """A buffer indexed like an array: `x[i]` is a load, `x[i] = v` emits a store into the
    builder. A single index into an N-d buffer is linear (row-major over the buffer's shape);
    N indices address the N dimensions. With a vector content type ("float32x4") element `i`
    is the vector of lanes `[i * lanes, (i + 1) * lanes)` of the last dimension."""

    def __init__(self, builder: "IRBuilder", buffer: Buffer, content_type: DTypeLike,
                 shape=None, view: bool = False):
        self._builder = builder
        self._buffer = buffer
        self._content_type = as_dtype(content_type)
        self._shape = tuple(buffer.shape if shape is None else shape)  # in content elements
        self._view = view  # `shape` is another shape over the buffer's elements

    @property
    def dtype(self):
        return self._content_type

    @property
    def buffer(self) -> Buffer:
        return self._buffer

    def asobject(self) -> Buffer:
        return self._buffer

    def _indices(self, index) -> tuple:
        index = list(index) if isinstance(index, (tuple, list)) else [index]
        index = [E.convert(i) for i in index]
        ndim = len(self._shape)
        if len(index) not in (1, ndim):
            raise IRError(f"buffer '{self._buffer.name}' has {ndim} dimensions but is indexed "
                          f"with {len(index)} indices")
        if self._view:
            linear = index[0] if len(index) == 1 else _ravel(index, self._shape)
            shape = self._buffer.shape
            return tuple(_unravel(linear, shape) if len(shape) > 1 else [linear])
        if len(index) == 1 and ndim > 1:
            index = _unravel(index[0], self._shape)
        lanes = self._content_type.lanes
        if lanes > 1:
            base = index[-1] * lanes
            index[-1] = E.Ramp(base, E.make_const(base.dtype, 1), lanes)
        return tuple(index)

    def __getitem__(self, index) -> E.BufferLoad:
        return E.BufferLoad(self._buffer, self._indices(index))

    def __setitem__(self, index, value) -> None:
        want = self._content_type
        if isinstance(value, (bool, int)) or (isinstance(value, float) and want.is_float):
            value = E.make_const(want, value)  # a Python number takes the buffer's type
        value = E.convert(value)
        if value.dtype.element_of() != want.element_of():
            raise IRError(f"store of a {value.dtype} value into buffer '{self._buffer.name}' of "
                          f"{want}: cast the value with .astype('{want.element_of()}')")
        if value.dtype.lanes == 1 and want.lanes > 1:
            value = E.Broadcast(value, want.lanes)
        self._builder.emit(BufferStore(self._buffer, value, self._indices(index)))


class IRBuilder:
    """Builds a statement from emitted statements and nested scopes (see the module doc)."""

    def __init__(self):
        self._seq_stack: List[List[Emitted]] = [[]]
        self.nidx = 0

    def _pop_seq(self) -> Stmt:
        """The statement of the innermost scope, which is removed."""
        items = self._seq_stack.pop()
        if not items or callable(items[-1]):
            items.append(Evaluate(E.const(0)))
        body: List[Stmt] = [items[-1]]
        for item in reversed(items[:-1]):
            if callable(item):
                body = [item(seq(*reversed(body)))]
            else:
                body.append(item)
        return seq(*reversed(body))

    def emit(self, stmt: Union[Stmt, E.PrimExpr, Callable[[Stmt], Stmt]]) -> None:
        """Appends a statement to the current scope (an expression, typically a Call, is
        evaluated for its effect); a callable taking a body wraps the rest of the scope."""
        if isinstance(stmt, (E.PrimExpr, E.EqualOp, E.NotEqualOp)):
            stmt = Evaluate(E.convert(stmt))
        if not (isinstance(stmt, Stmt) or callable(stmt)):
            raise IRError(f"ir_builder.emit takes a statement, an expression or a callable "
                          f"making a statement from a body, got {type(stmt).__name__}")
        self._seq_stack[-1].append(stmt)

    def scope_attr(self, node, attr_key: str, value) -> None:
        """Wraps the rest of the current scope in `AttrStmt(node, attr_key, value)`. On a thread
        IterVar, "thread_extent" makes a THREAD_BINDING loop of that extent over its var."""
        if isinstance(node, str):
            node = E.StringImm(node)
        value = E.convert(value)
        if attr_key == "thread_extent":
            if not (isinstance(node, E.IterVar) and node.kind == E.IterKind.THREAD):
                raise IRError("scope_attr(node, 'thread_extent', n) needs a thread IterVar "
                              f"(te.thread_axis), got {node!r}")
            iv = node
            self.emit(lambda body: For(iv.var, E.make_const(value.dtype, 0), value,
                                       ForKind.THREAD_BINDING, body, thread_binding=iv))
            return
        self.emit(lambda body: AttrStmt(node, attr_key, value, body))

    def for_range(self, begin, end, name: str = "i", dtype: DTypeLike = "int32",
                  kind: str = "serial") -> WithScope:
        """A loop scope over [begin, end); entering it gives the loop variable. `kind` is
        "serial", "parallel", "vectorize" or "unroll". The default name "i" becomes i, j, k,
        i_0, i_1, ... for successive loops of one builder."""
        if kind not in _KINDS:
            raise IRError(f"for_range kind {kind!r} is unknown; use one of {', '.join(_KINDS)}")
        if name == "i":
            name = chr(ord("i") + self.nidx) if self.nidx < 3 else f"i_{self.nidx - 3}"
            self.nidx += 1
        loop_var = E.Var(name, as_dtype(dtype))
        begin, end = E.convert(begin), E.convert(end)
        if begin.dtype != loop_var.dtype:
            begin = E.cast(loop_var.dtype, begin)
        if end.dtype != loop_var.dtype:
            end = E.cast(loop_var.dtype, end)
        from_zero = E.is_const_int(begin, 0)
        extent = end if from_zero else simplify(end - begin)
        self._seq_stack.append([])

        def _exit_cb():
            body = self._pop_seq()
            if not from_zero:
                body = substitute(body, {loop_var: loop_var + begin})
            self.emit(For(loop_var, E.make_const(loop_var.dtype, 0), extent, _KINDS[kind],
                          body))

        return WithScope(loop_var, _exit_cb)

    def while_loop(self, condition) -> WithScope:
        """A scope repeated while `condition` holds (re-evaluated before each iteration)."""
        condition = E.convert(condition)
        self._seq_stack.append([])

        def _exit_cb():
            self.emit(While(condition, self._pop_seq()))

        return WithScope(None, _exit_cb)

    def if_scope(self, cond) -> WithScope:
        """A scope run when `cond` holds; an `else_scope` may follow it at once."""
        cond = E.convert(cond)
        self._seq_stack.append([])

        def _exit_cb():
            self.emit(IfThenElse(cond, self._pop_seq(), None))

        return WithScope(None, _exit_cb)

    def else_scope(self) -> WithScope:
        """The else branch of the `if_scope` just closed."""
        current = self._seq_stack[-1]
        prev = current[-1] if current else None
        if not isinstance(prev, IfThenElse) or prev.else_case is not None:
            raise IRError("else_scope must follow an if_scope (with no else) in the same scope")
        current.pop()
        self._seq_stack.append([])

        def _exit_cb():
            self.emit(IfThenElse(prev.condition, prev.then_case, self._pop_seq()))

        return WithScope(None, _exit_cb)

    def new_scope(self) -> WithScope:
        """A nested scope: bounds what `allocate`, `let` and `scope_attr` wrap."""
        self._seq_stack.append([])

        def _exit_cb():
            self.emit(self._pop_seq())

        return WithScope(None, _exit_cb)

    def let(self, var_name: str, value) -> E.Var:
        """Binds a new variable to `value` for the rest of the current scope; returns it."""
        value = E.convert(value)
        var = E.Var(var_name, value.dtype)
        self.emit(lambda body: LetStmt(var, value, body))
        return var

    def allocate(self, dtype: DTypeLike, shape, name: str = "buf",
                 scope: str = "") -> BufferVar:
        """Allocates a buffer of `shape` for the rest of the current scope. `scope` is "global"
        (the default), "local" or "shared". A vector `dtype` ("float32x4") allocates that
        many scalar lanes per element of the last dimension."""
        content = as_dtype(dtype)
        shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        shape = [E.convert(s) for s in shape]
        lanes_shape = shape
        if content.lanes > 1:
            lanes_shape = shape[:-1] + [simplify(shape[-1] * content.lanes)]
        buf = decl_buffer(lanes_shape, content.element_of(), name, scope=scope or "global")
        self.emit(lambda body: Allocate(buf, body))
        return BufferVar(self, buf, content, shape)

    def pointer(self, content_type: DTypeLike, name: str = "ptr", scope: str = "") -> BufferVar:
        """A pointer (a 1-d buffer of unknown extent) of `content_type`, not allocated here:
        its data variable must be bound by whoever uses the statement."""
        content = as_dtype(content_type)
        buf = decl_buffer((E.SizeVar(f"{name}_extent"),), content.element_of(), name,
                          scope=scope or "global")
        return BufferVar(self, buf, content)

    def buffer_ptr(self, buf: Buffer, shape=None) -> BufferVar:
        """`buf` (typically a `te.extern` input or output) indexable as an array; `shape`
        views it with another shape of the same number of elements (indices are row-major
        over `shape`, then over the buffer's own shape)."""
        if not isinstance(buf, Buffer):
            raise IRError(f"buffer_ptr takes a Buffer (the ins/outs of te.extern), got "
                          f"{type(buf).__name__}")
        if shape is not None:
            shape = shape if isinstance(shape, (list, tuple)) else (shape,)
            shape = tuple(E.convert(s) for s in shape)
        return BufferVar(self, buf, buf.dtype, shape, view=shape is not None)

    def likely(self, expr) -> E.PrimExpr:
        """`expr` marked as likely true (a branch hint)."""
        expr = E.convert(expr)
        return E.Call(expr.dtype, "tir.likely", (expr,))

    def get(self) -> Stmt:
        """The statement built so far; every scope must be closed."""
        if len(self._seq_stack) != 1:
            raise IRError("ir_builder.get() inside an open scope: close every `with` first")
        stmt = self._pop_seq()
        self._seq_stack.append([])
        return stmt


def create() -> IRBuilder:
    """A new IRBuilder."""
    return IRBuilder()
