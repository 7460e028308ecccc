"""Statements of the loop IR. Immutable values, compared by identity (see expr.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple, Union

from .buffer import Buffer, vector_indices
from .expr import IterVar, Node, PrimExpr, Range, Var, convert, make_const


class Stmt(Node):
    __slots__ = ()


class ForKind:
    SERIAL = "serial"
    PARALLEL = "parallel"          # chunks run on the thread pool (TVMBackendParallelLaunch)
    VECTORIZED = "vectorized"      # becomes Ramp/Broadcast vector code
    UNROLLED = "unrolled"          # fully unrolled
    THREAD_BINDING = "thread_binding"  # a GPU thread axis; `thread_binding` names it


@dataclass(frozen=True, eq=False, slots=True)
class For(Stmt):
    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: str
    body: Stmt
    thread_binding: Optional[IterVar] = None
    annotations: Tuple[Tuple[str, Any], ...] = ()

    def __post_init__(self):
        # Python numbers as bounds take the loop variable's dtype, as TVM's
        for name in ("min", "extent"):
            value = getattr(self, name)
            if not isinstance(value, PrimExpr):
                value = make_const(self.loop_var.dtype, value) if isinstance(value, int) \
                    else convert(value)
                object.__setattr__(self, name, value)


@dataclass(frozen=True, eq=False, slots=True)
class While(Stmt):
    condition: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class LetStmt(Stmt):
    var: Var
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class AttrStmt(Stmt):
    """An annotation `key = value` on `node` around `body` (pragmas, thread extents, ...)."""

    node: Any
    key: str
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class AssertStmt(Stmt):
    """If `condition` is false, raise an error of `kind` ("TypeError", "ValueError", ...) whose
    message is the concatenation of `message` parts (strings, or integer expressions printed in
    decimal), and return -1 from the function. In a hybrid script's statements (before lowering)
    `message` is one StringImm, as TVM's."""

    condition: PrimExpr
    kind: str
    message: Tuple[Union[str, PrimExpr], ...]
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: Tuple[PrimExpr, ...]

    def __post_init__(self):
        if type(self.indices) is not tuple:  # a list, as TVM code passes them
            object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", convert(self.value))


@dataclass(frozen=True, eq=False, slots=True)
class Allocate(Stmt):
    """Allocate `buffer` (its data var becomes defined) for the extent of `body`."""

    buffer: Buffer
    body: Stmt
    condition: Optional[PrimExpr] = None

    # TVM's fields of an Allocate, read from its buffer
    @property
    def buffer_var(self) -> Var:
        return self.buffer.data

    @property
    def dtype(self):
        return self.buffer.dtype

    @property
    def extents(self) -> Tuple[PrimExpr, ...]:
        return self.buffer.shape


@dataclass(frozen=True, eq=False, slots=True)
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Optional[Stmt] = None


@dataclass(frozen=True, eq=False, slots=True)
class SeqStmt(Stmt):
    """Statements run in order; `seq` may be given as any sequence (TVM's SeqStmt takes a
    list) and is held as a tuple, the form the IR visitors walk."""

    seq: Tuple[Stmt, ...]

    def __post_init__(self):
        if not isinstance(self.seq, tuple):
            object.__setattr__(self, "seq", tuple(self.seq))

    def __getitem__(self, i):  # as TVM's: seq_stmt[k] is its k-th statement
        return self.seq[i]

    def __len__(self) -> int:
        return len(self.seq)

    def __bool__(self) -> bool:  # a statement is always something, even with no parts
        return True


@dataclass(frozen=True, eq=False, slots=True)
class Evaluate(Stmt):
    """Evaluates an expression for its effect (a call); `Evaluate(0)` is a no-op."""

    value: PrimExpr


@dataclass(frozen=True, eq=False, slots=True)
class Return(Stmt):
    """Returns `value` (an int32 status) from the function."""

    value: PrimExpr


def _buffer_vstore(buffer: Buffer, begin, value) -> BufferStore:
    """`buffer.vstore(begin, value)`, as TVM's Buffer.vstore: stores `value` at index `begin`; a
    vector value of `lanes` elements stores that many consecutive elements (the last index
    becomes a Ramp)."""
    from_value = convert(value)
    indices = vector_indices(buffer, begin, from_value.dtype, "vstore")
    return BufferStore(buffer, from_value, indices)


# Statements are defined after buffers (a Buffer is part of a BufferStore), so the method of
# Buffer that makes a statement is attached here.
Buffer.vstore = _buffer_vstore


def seq(*stmts: Optional[Stmt]) -> Stmt:
    """A statement running `stmts` in order, flattening nested sequences and dropping None."""
    flat = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))


def no_op() -> Stmt:

    return Evaluate(make_const("int32", 0))


@dataclass(frozen=True, eq=False, slots=True)
class ProducerStore(Stmt):
    """`producer[indices] = value`, where `producer` is a tensor of an operation that has no
    buffer yet (a hybrid script's statements); lowering turns it into a BufferStore."""

    producer: Any
    value: PrimExpr
    indices: Tuple[PrimExpr, ...]

    def __post_init__(self):
        if type(self.indices) is not tuple:
            object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", convert(self.value))


@dataclass(frozen=True, eq=False, slots=True)
class ProducerRealize(Stmt):
    """Storage for the tensor `producer` over `bounds` (one Range per dimension) in
    `storage_scope`, for the extent of `body`; lowering turns it into an Allocate."""

    producer: Any
    bounds: Tuple[Range, ...]
    condition: PrimExpr
    body: Stmt
    storage_scope: str = ""

    def __post_init__(self):
        if type(self.bounds) is not tuple:
            object.__setattr__(self, "bounds", tuple(self.bounds))


Attrs = Dict[str, Any]
_ = field
