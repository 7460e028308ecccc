"""TensorIR blocks: the statements `te.create_prim_func` and TVMScript's `T.block` make.

A `Block` is a unit of computation with its own iteration variables (`iter_vars`, each an
IterVar whose `dom` is the range it covers and whose kind is DATA_PAR for a spatial axis or
REDUCE for a reduction axis), the buffer regions it reads and writes, an optional `init`
statement (what a reduction stores before its first update), buffers it allocates for its body,
buffers it matches to regions of others, and annotations. A `BlockRealize` runs a block at one
point: `iter_values` give the value of each iteration variable (in terms of the loops around
it), and the block runs only where `predicate` holds.

The lowering passes compiler/tir/transform/lower_init_block.py,
convert_blocks_to_opaque.py and lower_opaque_block.py turn blocks back into plain loop IR.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple

from ..ir.errors import IRError
from .buffer import Buffer
from .expr import IterVar, Node, PrimExpr, Range, convert, make_const
from .stmt import Stmt


@dataclass(frozen=True, eq=False, slots=True)
class BufferRegion(Node):
    """The part of `buffer` that `region` (one Range per dimension) covers."""

    buffer: Buffer
    region: Tuple[Range, ...]

    def __post_init__(self):
        if not isinstance(self.region, tuple):
            object.__setattr__(self, "region", tuple(self.region))
        if len(self.region) != self.buffer.ndim:
            raise IRError(f"a region of buffer '{self.buffer.name}' needs {self.buffer.ndim} "
                          f"ranges, got {len(self.region)}")

    @staticmethod
    def full_region(buffer: Buffer) -> "BufferRegion":
        """The whole of `buffer`."""
        return BufferRegion(buffer, tuple(Range(make_const(s.dtype, 0), s)
                                          for s in buffer.shape))

    @staticmethod
    def from_point(buffer: Buffer, indices: Sequence[PrimExpr]) -> "BufferRegion":
        """The single element of `buffer` at `indices`."""
        return BufferRegion(buffer, tuple(Range(convert(i), make_const(convert(i).dtype, 1))
                                          for i in indices))


@dataclass(frozen=True, eq=False, slots=True)
class MatchBufferRegion(Node):
    """`buffer` (defined here) is a view of the region `source` of another buffer."""

    buffer: Buffer
    source: BufferRegion


def _annotations(value) -> dict:
    if value is None:
        return {}
    return dict(value)


@dataclass(frozen=True, eq=False, slots=True)
class Block(Stmt):
    """See the module docstring. The fields and their order are TVM's `tir.Block`."""

    iter_vars: Tuple[IterVar, ...]
    reads: Tuple[BufferRegion, ...]
    writes: Tuple[BufferRegion, ...]
    name_hint: str
    body: Stmt
    init: Optional[Stmt] = None
    alloc_buffers: Tuple[Buffer, ...] = ()
    match_buffers: Tuple[MatchBufferRegion, ...] = ()
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("iter_vars", "reads", "writes", "alloc_buffers", "match_buffers"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value or ()))
        if not isinstance(self.annotations, dict):
            object.__setattr__(self, "annotations", _annotations(self.annotations))


@dataclass(frozen=True, eq=False, slots=True)
class BlockRealize(Stmt):
    """Runs `block` with its iteration variables bound to `iter_values`, where `predicate`
    holds."""

    iter_values: Tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        values = tuple(convert(v) for v in self.iter_values)
        object.__setattr__(self, "iter_values", values)
        pred = self.predicate
        if isinstance(pred, bool) or pred is None:
            pred = make_const("bool", True if pred is None else pred)
        object.__setattr__(self, "predicate", convert(pred))
        if len(values) != len(self.block.iter_vars):
            raise IRError(f"block '{self.block.name_hint}' has {len(self.block.iter_vars)} "
                          f"iteration variables but is realized with {len(values)} values")


def is_true(e: PrimExpr) -> bool:
    """Whether `e` is the constant true (a predicate that always holds)."""
    return getattr(e, "value", None) == 1 and e.dtype.is_bool

