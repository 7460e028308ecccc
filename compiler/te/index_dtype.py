"""`normalize_index_dtype(func, dtype)`: every index of a PrimFunc of blocks in one integer dtype
(te.create_prim_func's `index_dtype_override`, as TVM's IndexDataTypeNormalizer).

Index positions are buffer shapes and indices, loop bounds and variables, block iteration
variables, their domains and bindings, and buffer regions. There, integer constants take
`dtype`, integer variables are replaced by variables of `dtype` (one per variable), and
arithmetic is rebuilt from the rewritten operands; any other integer expression of another
dtype is cast. Elsewhere (stored values) a rewritten variable appears cast back to its own
dtype, and loads keep their element type with rewritten indices.
"""
from __future__ import annotations

from typing import Dict

from ..ir.dtype import DType
from ..tir import expr as E
from ..tir.block import Block, BlockRealize, BufferRegion
from ..tir.buffer import Buffer
from ..tir.function import PrimFunc
from ..tir.functor import IRMutator
from ..tir.stmt import BufferStore, For

_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def normalize_index_dtype(func: PrimFunc, dtype: DType) -> PrimFunc:
    n = _Normalizer(dtype)
    bmap = tuple((p, n.visit_buffer(b)) for p, b in func.buffer_map)
    body = n.visit(func.body)
    return PrimFunc(func.params, body, bmap, func.attrs)


def _is_int(dtype) -> bool:
    return dtype.is_integer and not dtype.is_bool


class _Normalizer(IRMutator):
    def __init__(self, dtype: DType):
        self.dtype = dtype
        self.vars: Dict[E.Var, E.Var] = {}
        self.bufs: Dict[Buffer, Buffer] = {}

    # ---- index positions -------------------------------------------------------------------
    def var(self, v: E.Var) -> E.Var:
        if not _is_int(v.dtype) or v.dtype == self.dtype:
            return v
        new = self.vars.get(v)
        if new is None:
            new = self.vars[v] = type(v)(v.name, self.dtype)
        return new

    def index(self, e) -> E.PrimExpr:
        e = E.convert(e)
        if isinstance(e, (E.EqualOp, E.NotEqualOp)):
            e = e.asobject()
        if isinstance(e, E.IntImm) and _is_int(e.dtype):
            return E.make_const(self.dtype, e.value)
        if isinstance(e, E.Var):
            return self.var(e)
        if isinstance(e, _ARITH):
            return type(e)(self.index(e.a), self.index(e.b))
        if isinstance(e, E.Select):
            return E.Select(self.visit(e.condition), self.index(e.true_value),
                            self.index(e.false_value))
        value = self.visit(e)
        if _is_int(value.dtype) and value.dtype != self.dtype:
            return E.cast(self.dtype, value)
        return value

    def range(self, r: E.Range) -> E.Range:
        return E.Range(self.index(r.min), self.index(r.extent))

    def visit_buffer(self, b: Buffer) -> Buffer:
        new = self.bufs.get(b)
        if new is None:
            shape = tuple(self.index(s) for s in b.shape)
            new = Buffer(b.name, b.data, b.dtype, shape, b.strides, b.elem_offset, b.scope,
                         b.data_alignment, b.offset_factor)
            self.bufs[b] = new
        return new

    # ---- value positions -------------------------------------------------------------------
    def visit_Var(self, v: E.Var):
        new = self.vars.get(v)
        return v if new is None else E.cast(v.dtype, new)

    visit_SizeVar = visit_Var

    def visit_BufferLoad(self, e: E.BufferLoad):
        return E.BufferLoad(self.visit_buffer(e.buffer), tuple(self.index(i) for i in e.indices))

    def visit_BufferStore(self, s: BufferStore):
        return BufferStore(self.visit_buffer(s.buffer), self.visit(s.value),
                           tuple(self.index(i) for i in s.indices))

    def visit_For(self, s: For):
        return For(self.var(s.loop_var), self.index(s.min), self.index(s.extent), s.kind,
                   self.visit(s.body), s.thread_binding, s.annotations)

    def region(self, r: BufferRegion) -> BufferRegion:
        return BufferRegion(self.visit_buffer(r.buffer), tuple(self.range(x) for x in r.region))

    def visit_BlockRealize(self, s: BlockRealize):
        return BlockRealize(tuple(self.index(v) for v in s.iter_values), self.visit(s.predicate),
                            self.visit(s.block))

    def visit_Block(self, b: Block):
        iter_vars = tuple(E.IterVar(self.range(iv.dom), self.var(iv.var), iv.kind,
                                    iv.thread_tag) for iv in b.iter_vars)
        allocs = tuple(self.visit_buffer(x) for x in b.alloc_buffers)
        annotations = {k: self.annotation(v) for k, v in b.annotations.items()}
        return Block(iter_vars, tuple(self.region(r) for r in b.reads),
                     tuple(self.region(r) for r in b.writes), b.name_hint, self.visit(b.body),
                     None if b.init is None else self.visit(b.init), allocs, b.match_buffers,
                     annotations)

    def annotation(self, value):
        if isinstance(value, Buffer):
            return self.visit_buffer(value)
        if isinstance(value, (list, tuple)):
            return [self.annotation(v) for v in value]
        return value
