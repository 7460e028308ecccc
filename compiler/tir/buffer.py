"""Buffers: a typed, shaped view of memory reached through a `data` handle variable.

`shape` and `strides` are expressions (symbolic shapes are Vars). Empty `strides` means compact
row-major. `elem_offset` is in elements. `scope` is "global" (function arguments and workspace),
"local" (registers/stack) or "shared" (GPU shared memory).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence, Tuple

from ..ir.dtype import DType, DTypeLike, as_dtype, handle, int32
from ..ir.errors import IRError
from .expr import (
    BinaryOp,
    BufferLoad,
    Call,
    Node,
    PrimExpr,
    Ramp,
    Var,
    convert,
    is_const_int,
    make_const,
)


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

    def vload(self, begin, dtype: Optional[DTypeLike] = None) -> BufferLoad:
        """The value at index `begin` (one index per dimension), as TVM's Buffer.vload: with a
        vector `dtype` of `lanes` elements ("float32x4" on a float32 buffer) the last index
        becomes a Ramp, so `lanes` consecutive elements are loaded."""
        indices = vector_indices(self, begin, dtype, "vload")
        return BufferLoad(self, indices)

    def access_ptr(self, access_mask, ptr_type: str = "handle", content_lanes: int = 1,
                   offset=0, extent=None) -> PrimExpr:
        """A pointer to the buffer's data, `offset` elements past its elem_offset, as TVM's
        Buffer.access_ptr: `tir.tvm_access_ptr(type, data, elem_offset + offset, extent,
        mask)`. `access_mask` is "r", "w", "rw" or the bits 1 (read) | 2 (write); `extent`
        defaults to the elements from the offset to the end. Lowering (storage_flatten) turns it
        into the address of that element."""
        mask = _access_mask(access_mask)
        lanes = int(content_lanes)
        dtype = self.dtype.with_lanes(self.dtype.lanes * lanes) if lanes > 1 else self.dtype
        offset = convert(offset)
        start = offset if is_const_int(self.elem_offset, 0) else self.elem_offset + offset
        if extent is None:
            extent = _elements(self.shape) - offset
            if isinstance(extent, BinaryOp) and all(is_const_int(x) for x in (extent.a,
                                                                              extent.b)):
                extent = make_const(int32, extent.a.value - extent.b.value)
        return Call(as_dtype(ptr_type), ACCESS_PTR,
                    (Call(dtype, TYPE_ANNOTATION, ()), self.data, start, convert(extent),
                     make_const(int32, mask)))


ACCESS_PTR, TYPE_ANNOTATION = "tir.tvm_access_ptr", "tir.type_annotation"


def _elements(shape) -> PrimExpr:
    """The product of `shape` (folded where the dimensions are constants)."""
    known, size = 1, None
    for s in shape:
        if is_const_int(s):
            known *= s.value
        else:
            size = s if size is None else size * s
    if size is None:
        return make_const(int32, known)
    return size if known == 1 else size * known


def _access_mask(mask) -> int:
    if isinstance(mask, int) and not isinstance(mask, bool) and 1 <= mask <= 3:
        return mask
    if isinstance(mask, str) and mask and set(mask) <= {"r", "w"}:
        return (1 if "r" in mask else 0) | (2 if "w" in mask else 0)
    raise IRError(f"access_ptr: the access mask must be 'r', 'w', 'rw' or 1-3, got {mask!r}")


def vector_indices(buffer: Buffer, begin, dtype, what: str) -> tuple:
    """The indices of a vload/vstore of `dtype` at `begin`: the last one a Ramp when `dtype`
    has more lanes than the buffer's element."""
    indices = tuple(convert(i) for i in (begin if isinstance(begin, (list, tuple)) else (begin,)))
    if len(indices) != buffer.ndim:
        raise IRError(f"{what} of buffer '{buffer.name}': {len(indices)} indices for its "
                      f"{buffer.ndim} dimensions")
    if dtype is None:
        return indices
    dtype = as_dtype(dtype)
    elem = buffer.dtype
    if dtype.element_of() != elem.element_of() or dtype.lanes % elem.lanes:
        raise IRError(f"{what} of buffer '{buffer.name}' ({elem}) as {dtype}: the dtype must "
                      f"be {elem.element_of()} with a multiple of {elem.lanes} lanes")
    factor = dtype.lanes // elem.lanes
    if factor == 1:
        return indices
    last = indices[-1]
    return indices[:-1] + (Ramp(last, make_const(last.dtype, 1), factor),)

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
