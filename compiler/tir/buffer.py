"""Buffers: a typed, shaped view of memory reached through a `data` handle variable.

`shape` and `strides` are expressions (symbolic shapes are Vars). Empty `strides` means compact
row-major. `elem_offset` is in elements. `scope` is "global" (function arguments and workspace),
"local" (registers/stack) or "shared" (GPU shared memory).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence, Tuple

from ..ir.dtype import DType, DTypeLike, as_dtype, handle, int32
from .expr import BufferLoad, Node, PrimExpr, Var, convert, make_const


@dataclass(frozen=True, eq=False, slots=True)
class Buffer(Node):
    name: str
    data: Var
    dtype: DType
    shape: Tuple[PrimExpr, ...]
    strides: Tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr = field(default_factory=lambda: make_const(int32, 0))
    scope: str = "global"
    data_alignment: int = 64
    offset_factor: int = 1

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, tuple(convert(i) for i in indices))

    def vload(self, indices, dtype: Optional[DTypeLike] = None) -> BufferLoad:
        load = self[indices]
        if dtype is not None and as_dtype(dtype) != load.dtype:
            return BufferLoad(self, load.indices, as_dtype(dtype))
        return load


def decl_buffer(shape: Sequence, dtype: DTypeLike = "float32", name: str = "buffer",
                data: Optional[Var] = None, strides: Sequence = (), elem_offset=None,
                scope: str = "global", data_alignment: int = 64,
                offset_factor: int = 0) -> Buffer:
    """A new Buffer; its data pointer is a fresh handle Var unless `data` is given.

    As in TVM, a non-zero `offset_factor` without an `elem_offset` makes the offset symbolic
    (a Var `<name>_elem_offset`, bound from a tensor argument's byte_offset and required to be
    a multiple of `offset_factor`); otherwise the offset is 0.
    """
    dtype = as_dtype(dtype)
    shape = tuple(convert(s) for s in (shape if isinstance(shape, (list, tuple)) else (shape,)))
    if data is None:
        data = Var(name, handle)
    if elem_offset is None:
        elem_offset = Var(f"{name}_elem_offset", int32) if offset_factor else make_const(int32, 0)
    return Buffer(name=name, data=data, dtype=dtype, shape=shape,
                  strides=tuple(convert(s) for s in strides), elem_offset=convert(elem_offset),
                  scope=scope, data_alignment=data_alignment,
                  offset_factor=max(offset_factor, 1))
