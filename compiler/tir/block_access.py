"""The buffer regions a block reads and writes, and the completion of blocks whose regions were
left to be found (TVMScript blocks without `T.reads`/`T.writes`, te.create_prim_func's blocks).

`access_regions(block, buffers)` walks the block's init and body (not into nested blocks, whose
own regions count instead) and gathers, per buffer of `buffers` (data Var -> Buffer: the
buffers visible around the block), the union of the indices it loads and stores. Variables of
loops inside the block are relaxed over their ranges; every other variable (the block's own
iteration variables, symbolic shapes) stands for itself. An index whose value cannot be bounded
(a call, a float value cast to an integer, a load from a float buffer) covers the whole
dimension unless a min/max bounds it. A dimension touched at one point is the range
`[index, index + 1)`; otherwise the bounds' range, or the whole dimension when unbounded. A
block with an `init` (a reduction) does not list the buffers it writes among those it reads.

`complete(func, root_allocs)` wraps the body of a function holding blocks in a root block
"root" that allocates `root_allocs` (when needed), and fills the reads and/or writes of every
block annotated "tir.script_parsing_detect_access" (1 reads, 2 writes, 3 both), removing the
annotation.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..arith import simplify
from ..ir.errors import IRError
from ..ir.structural_equal import structural_equal
from . import expr as E
from .block import Block, BlockRealize, BufferRegion
from .buffer import Buffer
from .function import PrimFunc
from .functor import IRMutator, IRVisitor, substitute

DETECT_ACCESS = "tir.script_parsing_detect_access"

End = Optional[E.PrimExpr]   # None: unbounded
Bounds = Tuple[End, End]     # inclusive


def _point(e: E.PrimExpr) -> Bounds:
    return (e, e)


def _is_point(b: Bounds) -> bool:
    return b[0] is not None and b[0] is b[1]


def _add(a: End, b: End) -> End:
    return None if a is None or b is None else a + b


def _sub(a: End, b: End) -> End:
    return None if a is None or b is None else a - b


def _pick(a: End, b: End, cls, unbounded_wins: bool) -> End:
    if a is None or b is None:
        return None if unbounded_wins else (b if a is None else a)
    return simplify(cls(a, b))


class _Bounds:
    """Inclusive bounds of an integer index, loop variables relaxed over `ranges`."""

    def __init__(self, ranges: Dict[E.Var, Bounds]):
        self.ranges = ranges

    def __call__(self, e: E.PrimExpr) -> Bounds:
        if isinstance(e, (E.EqualOp, E.NotEqualOp)):
            e = e.asobject()
        if isinstance(e, E.IntImm):
            return _point(e)
        if isinstance(e, E.Var):
            return self.ranges.get(e, _point(e))
        if isinstance(e, E.Cast):
            lo, hi = self(e.value)
            if _is_point((lo, hi)):
                return _point(e if lo is e.value else E.cast(e.dtype, lo))
            return (None if lo is None else E.cast(e.dtype, lo),
                    None if hi is None else E.cast(e.dtype, hi))
        if isinstance(e, E.BufferLoad):
            relaxed = any(isinstance(n, E.Var) and n in self.ranges
                          for i in e.indices for n in _vars(i))
            if e.dtype.is_integer and not relaxed:
                return _point(e)
            return (None, None)
        if isinstance(e, E.BinaryOp):
            return self.binary(e)
        return (None, None)

    def binary(self, e: E.BinaryOp) -> Bounds:
        a, b = self(e.a), self(e.b)
        if _is_point(a) and _is_point(b):
            if a[0] is e.a and b[0] is e.b:
                return _point(e)
            return _point(simplify(type(e)(a[0], b[0])))
        if isinstance(e, E.Add):
            return (_add(a[0], b[0]), _add(a[1], b[1]))
        if isinstance(e, E.Sub):
            return (_sub(a[0], b[1]), _sub(a[1], b[0]))
        if isinstance(e, E.Min):
            return (_pick(a[0], b[0], E.Min, True), _pick(a[1], b[1], E.Min, False))
        if isinstance(e, E.Max):
            return (_pick(a[0], b[0], E.Max, False), _pick(a[1], b[1], E.Max, True))
        k = b[0] if _is_point(b) and isinstance(b[0], E.IntImm) else None
        if isinstance(e, E.Mul) and k is not None:
            lo, hi = (a[0], a[1]) if k.value >= 0 else (a[1], a[0])
            return (None if lo is None else lo * k, None if hi is None else hi * k)
        if isinstance(e, E.FloorDiv) and k is not None and k.value > 0:
            return (None if a[0] is None else E.floordiv(a[0], k),
                    None if a[1] is None else E.floordiv(a[1], k))
        if isinstance(e, E.FloorMod) and k is not None and k.value > 0:
            return (E.make_const(e.dtype, 0), E.make_const(e.dtype, k.value - 1))
        return (None, None)


def _vars(e) -> List[E.Var]:
    found: List[E.Var] = []

    class V(IRVisitor):
        def visit_Var(self, v):
            found.append(v)

        visit_SizeVar = visit_Var

    V().visit(e)
    return found


def _union(a: Bounds, b: Bounds) -> Bounds:
    if a[0] is not None and b[0] is not None and _is_point(a) and _is_point(b) \
            and structural_equal(a[0], b[0]):
        return a
    return (_pick(a[0], b[0], E.Min, True), _pick(a[1], b[1], E.Max, True))


class _Detector(IRVisitor):
    def __init__(self, buffers: Dict[E.Var, Buffer]):
        self.buffers = buffers
        self.ranges: Dict[E.Var, Bounds] = {}
        self.reads: Dict[int, Tuple[Buffer, List[Bounds]]] = {}
        self.writes: Dict[int, Tuple[Buffer, List[Bounds]]] = {}
        self.opaque: List[Buffer] = []

    def update(self, table, buf: Buffer, bounds: List[Bounds]) -> None:
        if self.buffers.get(buf.data) is None:
            return
        old = table.get(id(buf))
        if old is None:
            table[id(buf)] = (buf, bounds)
        else:
            table[id(buf)] = (buf, [_union(x, y) for x, y in zip(old[1], bounds)])

    def index_bounds(self, indices) -> List[Bounds]:
        b = _Bounds(self.ranges)
        return [b(E.convert(i)) for i in indices]

    def visit_BufferLoad(self, e):
        self.update(self.reads, e.buffer, self.index_bounds(e.indices))
        for i in e.indices:
            self.visit(i)

    def visit_BufferStore(self, s):
        self.update(self.writes, s.buffer, self.index_bounds(s.indices))
        self.visit(s.value)
        for i in s.indices:
            self.visit(i)

    def visit_Var(self, v):
        buf = self.buffers.get(v)
        if buf is not None and buf not in self.opaque:
            self.opaque.append(buf)

    def visit_For(self, s):
        self.visit(s.min)
        self.visit(s.extent)
        lo = simplify(s.min)
        self.ranges[s.loop_var] = (lo, simplify(s.min + s.extent - 1))
        self.visit(s.body)
        del self.ranges[s.loop_var]

    def visit_BlockRealize(self, s: BlockRealize):
        vmap = dict(zip((iv.var for iv in s.block.iter_vars), s.iter_values))
        for table, regions in ((self.reads, s.block.reads), (self.writes, s.block.writes)):
            for r in regions:
                bounds = []
                relax = _Bounds(self.ranges)
                for rng in r.region:
                    lo = relax(substitute(rng.min, vmap))[0]
                    hi = relax(substitute(rng.min + rng.extent - 1, vmap))[1]
                    bounds.append((lo, hi))
                self.update(table, r.buffer, bounds)

    def regions(self, table, exclude=()) -> Tuple[BufferRegion, ...]:
        out = []
        for buf, bounds in table.values():
            if buf in exclude:
                continue
            out.append(BufferRegion(buf, tuple(_cover(b, s) for b, s in zip(bounds, buf.shape))))
        return tuple(out)


def _cover(b: Bounds, extent: E.PrimExpr) -> E.Range:
    lo, hi = b
    if lo is not None and (lo is hi or (hi is not None and structural_equal(
            simplify(lo), simplify(hi)))):
        lo = simplify(lo)
        return E.Range(lo, E.make_const(lo.dtype, 1))
    if lo is None or hi is None:
        return E.Range(E.make_const(extent.dtype, 0), extent)
    lo = simplify(lo)
    return E.Range(lo, simplify(hi + 1 - lo))


def access_regions(block: Block, buffers: Dict[E.Var, Buffer]):
    """(reads, writes, opaque): the regions `block` reads and writes of `buffers`, and the
    buffers of them it uses by their data pointer (whose regions cannot be told)."""
    d = _Detector(buffers)
    if block.init is not None:
        d.visit(block.init)
    d.visit(block.body)
    writes = d.regions(d.writes)
    exclude = [r.buffer for r in writes] if block.init is not None else []
    return d.regions(d.reads, exclude), writes, list(d.opaque)


class _Completer(IRMutator):
    def __init__(self, buffers: Dict[E.Var, Buffer]):
        self.buffers = dict(buffers)
        self.has_block = False

    def visit_BlockRealize(self, s: BlockRealize):
        self.has_block = True
        return self.generic_visit(s)

    def visit_Block(self, b: Block):
        inner = [x for x in b.alloc_buffers] + [m.buffer for m in b.match_buffers]
        for buf in inner:
            self.buffers[buf.data] = buf
        new = self.generic_visit(b)
        for buf in inner:
            self.buffers.pop(buf.data, None)
        mask = b.annotations.get(DETECT_ACCESS)
        if mask is None:
            return new
        mask = int(getattr(mask, "value", mask))
        reads, writes, opaque = access_regions(new, self.buffers)
        if opaque:
            raise IRError(f"block '{b.name_hint}' uses buffer '{opaque[0].name}' through its "
                          "data pointer, so the regions it reads and writes cannot be found; "
                          "give them with T.reads(...) and T.writes(...)")
        annotations = {k: v for k, v in new.annotations.items() if k != DETECT_ACCESS}
        return Block(new.iter_vars, reads if mask & 1 else new.reads,
                     writes if mask & 2 else new.writes, new.name_hint, new.body, new.init,
                     new.alloc_buffers, new.match_buffers, annotations)


def _contains_block(stmt) -> bool:
    found = []

    class V(IRVisitor):
        def visit_BlockRealize(self, s):
            found.append(s)

    V().visit(stmt)
    return bool(found)


def complete(func: PrimFunc, root_allocs: Sequence[Buffer] = ()) -> PrimFunc:
    """`func` with a root block where it needs one and its blocks' regions found (see the
    module docstring)."""
    body = func.body
    top = body if isinstance(body, BlockRealize) else None
    if root_allocs or (top is not None and top.block.iter_vars) or \
            (top is None and _contains_block(body)):
        body = BlockRealize((), True, Block((), (), (), "root", body,
                                            alloc_buffers=tuple(root_allocs)))
    buffers = {b.data: b for _, b in func.buffer_map}
    for b in root_allocs:
        buffers[b.data] = b
    body = _Completer(buffers).visit(body)
    return func if body is func.body else func.with_body(body)
