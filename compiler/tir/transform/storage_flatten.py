"""storage_flatten: multi-dimensional buffer accesses become 1-D.

Before: BufferLoad/BufferStore with one index per buffer dimension; Allocate of N-d buffers.
After: every access in the body is on a 1-D buffer with elem_offset 0 and no strides, indexed by
`elem_offset + sum(index_d * stride_d)` (strides from the buffer, or compact row-major). A flat
buffer shares the `data` Var of the buffer it flattens, so `buffer_map` keeps the declared N-d
argument buffers (what the packed API checks against). A buffer that already is 1-D, compact
and at offset 0 is kept as it is.

A buffer of a vector dtype (`float32x2`: each element is `lanes` scalars, as TVM's) flattens to
its scalar element type, `lanes` times as long: the element at flat index i is the vector load
`Ramp(i * lanes, 1, lanes)`.

A `tir.tvm_access_ptr(type, data, offset, extent, mask)` (Buffer.access_ptr) becomes
`tir.address_of(buf[offset])` on a 1-D view of `data` with the annotated element type, so what
follows sees the pointer as an access to that memory.
"""
from __future__ import annotations

from typing import Dict, List

from ...arith import simplify as _simplify
from ...ir.module import IRModule
from .. import expr as E
from ..buffer import ACCESS_PTR, Buffer
from ..function import PrimFunc
from ..functor import IRMutator
from ..stmt import Allocate, BufferStore
from .common import map_funcs


def _is_flat(b: Buffer) -> bool:
    return (b.ndim == 1 and b.dtype.lanes == 1 and E.is_const_int(b.elem_offset, 0)
            and (not b.strides or E.is_const_int(b.strides[0], 1)))


def strides_of(b: Buffer) -> List[E.PrimExpr]:
    """Element strides of `b`: the declared ones, or compact row-major."""
    if b.strides:
        return list(b.strides)
    out, acc = [], E.const(1)
    for s in reversed(b.shape):
        out.append(acc)
        acc = _simplify(acc * s)
    return list(reversed(out))


def flat_extent(b: Buffer) -> E.PrimExpr:
    ext = E.const(1)
    if not b.strides:
        for s in b.shape:
            ext = s if E.is_const_int(ext, 1) else ext * s
    else:
        for s, st in zip(b.shape, b.strides):
            ext = ext + (s - 1) * st
    return _simplify(ext)


class _Flatten(IRMutator):
    def __init__(self):
        self.flat: Dict[Buffer, Buffer] = {}

    def flat_buffer(self, b: Buffer) -> Buffer:
        if _is_flat(b):
            return b
        if b not in self.flat:
            lanes = b.dtype.lanes
            extent = flat_extent(b) if lanes == 1 else _simplify(flat_extent(b) * lanes)
            self.flat[b] = Buffer(b.name, b.data, b.dtype.element_of(), (extent,), (),
                                  E.const(0), b.scope, b.data_alignment, b.offset_factor)
        return self.flat[b]

    def index(self, b: Buffer, indices) -> E.PrimExpr:
        if _is_flat(b):
            return indices[0]
        idx = None if E.is_const_int(b.elem_offset, 0) else b.elem_offset
        for i, st in zip(indices, strides_of(b)):
            term = i if E.is_const_int(st, 1) else i * st
            idx = term if idx is None else idx + term
        idx = idx if idx is not None else E.const(0)
        lanes = b.dtype.lanes
        if lanes == 1:
            return idx
        return E.Ramp(_simplify(idx * lanes), E.const(1, idx.dtype), lanes)

    def visit_BufferLoad(self, e):
        e = self.generic_visit(e)
        if _is_flat(e.buffer):
            return e
        return E.BufferLoad(self.flat_buffer(e.buffer), (self.index(e.buffer, e.indices),),
                            e.dtype)

    def visit_BufferStore(self, s):
        s = self.generic_visit(s)
        if _is_flat(s.buffer):
            return s
        return BufferStore(self.flat_buffer(s.buffer), s.value, (self.index(s.buffer, s.indices),))

    def visit_Call(self, e):
        e = self.generic_visit(e)
        if e.op != ACCESS_PTR:
            return e
        ann, data, offset, extent, _ = e.args
        lanes = ann.dtype.lanes
        if lanes > 1:
            offset, extent = offset * lanes, extent * lanes
        view = Buffer(data.name, data, ann.dtype.element_of(), (_simplify(offset + extent),))
        return E.Call(e.dtype, "tir.address_of", (E.BufferLoad(view, (_simplify(offset),)),))

    def visit_Allocate(self, s):
        body = self.visit(s.body)
        buf = self.flat_buffer(s.buffer)
        if body is s.body and buf is s.buffer:
            return s
        return Allocate(buf, body, s.condition)


def _flatten_func(f: PrimFunc) -> PrimFunc:
    return _Flatten().visit_func(f)


def storage_flatten(mod: IRModule) -> IRModule:
    return map_funcs(mod, _flatten_func)
