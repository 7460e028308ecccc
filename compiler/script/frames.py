"""What the `T` names that shape statements return, for parser.py to turn into statements
around the rest of the body: buffer, allocation, loop, thread-launch, attribute and let
declarations, and the dtype names (`T.float32`, ...)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

from ..ir.dtype import as_dtype
from ..ir.errors import CompilerError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer


class ScriptError(CompilerError):
    """A TVMScript construct that Kiln's parser does not read, or a malformed one."""


class DTypeName:
    """`T.<dtype>`: called with a number, a constant of the dtype; with an expression, its cast
    to the dtype; with nothing, a new variable of the dtype (VarDecl). As a parameter or
    assignment annotation, the variable's dtype."""

    def __init__(self, dtype: str):
        self.dtype = as_dtype(dtype)

    def __call__(self, value=None, *, is_size_var: bool = False):
        if value is None:
            return VarDecl(self.dtype, is_size_var)
        if isinstance(value, (bool, int, float)):
            return E.make_const(self.dtype, value)
        return E.cast(self.dtype, value)

    def __repr__(self) -> str:
        return f"T.{self.dtype}"


@dataclass
class VarDecl:
    """`n = T.int32()`: a new variable of the dtype, named after what it is assigned to (a
    symbolic shape, stride or offset)."""

    dtype: Any
    is_size_var: bool = False

    def build(self, name: str) -> E.Var:
        return (E.SizeVar if self.is_size_var else E.Var)(name, self.dtype)


@dataclass
class BufferDecl:
    """A buffer declared by `T.Buffer(...)`, `T.match_buffer(...)` or `T.decl_buffer(...)`;
    it becomes a Buffer named after what it is assigned to (or the parameter it annotates).
    `match` is the handle parameter of a match_buffer (or the region of another buffer it
    views, in a block); `allocates` whether a decl_buffer without data allocates its memory;
    `block_alloc` whether a `T.alloc_buffer` allocates it for the enclosing block."""

    shape: Tuple[Any, ...]
    dtype: str = "float32"
    data: Optional[E.Var] = None
    strides: Tuple[Any, ...] = ()
    elem_offset: Any = None
    scope: str = "global"
    align: int = -1
    offset_factor: int = 0
    match: Optional[E.Var] = None
    allocates: bool = False
    block_alloc: bool = False

    def build(self, name: str) -> Buffer:
        shape = self.shape if isinstance(self.shape, (list, tuple)) else (self.shape,)
        buf = decl_buffer(shape, self.dtype, name, data=self.data,
                          strides=tuple(self.strides or ()), elem_offset=self.elem_offset,
                          scope=self.scope or "global",
                          data_alignment=self.align if self.align > 0 else 64,
                          offset_factor=self.offset_factor)
        return buf


@dataclass
class AllocateDecl:
    """`T.allocate(extents, dtype, scope)`: memory for the rest of the scope; the name it is
    assigned to is its data pointer (a handle variable)."""

    extents: Tuple[Any, ...]
    dtype: str
    scope: str = "global"
    condition: Any = None


@dataclass
class LoopDecl:
    """One loop of `T.serial` / `T.parallel` / `T.vectorized` / `T.unroll` /
    `T.thread_binding` (or `range`): from `min`, `extent` iterations."""

    kind: str
    min: Any
    extent: Any
    thread: str = ""
    annotations: dict = field(default_factory=dict)


def loop(kind):
    def make(start, stop=None, *, annotations=None, thread=None):
        if stop is None:
            start, stop = 0, start
        start, stop = E.convert(start), E.convert(stop)
        extent = stop if E.is_const_int(start, 0) else stop - start
        if E.is_const_int(start) and E.is_const_int(stop):
            extent = E.make_const(stop.dtype, stop.value - start.value)
        return LoopDecl(kind, start, extent, thread or "", dict(annotations or {}))

    make.__name__ = kind
    return make


@dataclass
class GridDecl:
    """`T.grid(n0, n1, ...)`: serial loops nested in order."""

    extents: Tuple[Any, ...]


@dataclass
class FuncAttrDecl:
    attrs: dict


@dataclass
class LaunchDecl:
    """`T.launch_thread(thread, extent)`: the rest of the scope runs on `extent` threads."""

    iter_var: E.IterVar
    extent: Any


@dataclass
class AttrDecl:
    node: Any
    key: str
    value: Any


@dataclass
class LetDecl:
    var: E.Var
    value: Any


@dataclass
class BlockDecl:
    """`with T.block(name):` a block around the statements of the `with`."""

    name: str = ""
    no_realize: bool = False


@dataclass
class InitDecl:
    """`with T.init():` the statement a reduction block stores before its first update."""


@dataclass
class AxisDecl:
    """`T.axis.spatial(dom, binding)` (and reduce, scan, opaque): one iteration variable of the
    block being read, of `kind` over `dom`, bound to `binding`."""

    kind: str
    dom: E.Range
    binding: Any
    dtype: Any

    def build(self, name: str) -> E.IterVar:
        return E.IterVar(self.dom, E.Var(name, self.dtype), self.kind)


@dataclass
class BlockPartDecl:
    """`T.reads(...)`, `T.writes(...)`, `T.block_attr({...})`, `T.where(cond)`: `part` of the
    block being read takes `value`."""

    part: str
    value: Any


@dataclass
class StackShape:
    """`T.tvm_stack_make_shape(dims...)`."""

    dims: Tuple[Any, ...]


@dataclass
class StackArray:
    """`T.tvm_stack_make_array(data, shape, strides, ndim, type_value, elem_offset)`: a
    DLTensor describing a buffer, which Kiln writes as the Buffer itself."""

    data: Any
    shape: Any
    strides: Any
    ndim: Any
    type_value: Any
    elem_offset: Any
