"""vectorize: a VECTORIZED loop of constant extent L becomes one vector statement.

Before: For loops of kind VECTORIZED (starting at `min`, extent L constant).
After: no VECTORIZED loop remains. Where the body is a sequence of stores whose indices are
contiguous or strided in the loop variable (possibly under branches whose conditions do not
depend on it: they stay scalar branches around vector statements), the loop variable becomes
`Ramp(min, 1, L)` (an integer cast of it a Ramp of the cast type), loads and stores take Ramp
indices (L-lane values), and loop-invariant scalars are `Broadcast`. A body that is not of that
form (branches on the loop variable, nested loops, lets, stores not indexed by the loop
variable, gathers other than of lanes near one address (`lane_offsets`: a vector block
arranged by groups), lazy if_then_else on a vector condition) stays a SERIAL loop; an
if_then_else on a condition that does not depend on the loop variable takes vector branches.
A loop whose whole body is guarded by an upper bound on its variable (`if i + a < b`, b - a
constant once the enclosing loops of one iteration are substituted: the tail of an uneven
split) first runs over just the lanes the guard admits (`_narrowed`).
"""
from __future__ import annotations

from ...arith import simplify as _simplify
from ...ir.module import IRModule
from .. import expr as E
from ..function import PrimFunc
from ..functor import IRMutator, collect_vars, substitute
from ..lanes import lane_offsets
from ..stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, SeqStmt
from .common import conjuncts, map_funcs


class _CannotVectorize(Exception):
    pass


def _depends(e, var) -> bool:
    return any(v is var for v in collect_vars(e))


def _bcast(e, lanes):
    return e if e.dtype.lanes == lanes else E.Broadcast(e, lanes)


class _Vectorizer:
    def __init__(self, var: E.Var, start: E.PrimExpr, lanes: int):
        self.var, self.lanes = var, lanes
        self.ramp = E.Ramp(start, E.make_const(start.dtype, 1), lanes)

    def stmt(self, s):
        if isinstance(s, SeqStmt):
            return SeqStmt(tuple(self.stmt(x) for x in s.seq))
        if isinstance(s, IfThenElse) and not _depends(s.condition, self.var):
            return IfThenElse(s.condition, self.stmt(s.then_case),
                              None if s.else_case is None else self.stmt(s.else_case))
        if not isinstance(s, BufferStore) or len(s.indices) != 1:
            raise _CannotVectorize()
        idx = self.expr(s.indices[0])
        if not isinstance(idx, E.Ramp):
            raise _CannotVectorize()
        value = _bcast(self.expr(s.value), self.lanes)
        return BufferStore(s.buffer, value, (idx,))

    def expr(self, e):
        if not _depends(e, self.var):
            return e
        if e.dtype.lanes != 1:
            raise _CannotVectorize()
        if e is self.var:
            return self.ramp
        if isinstance(e, E.BinaryOp):
            return self.binary(e, self.expr(e.a), self.expr(e.b))
        if isinstance(e, E.BufferLoad):
            idx = [self.expr(i) for i in e.indices]
            if any(i.dtype.lanes != 1 and not isinstance(i, E.Ramp)
                   and not self._near(i) for i in idx):
                raise _CannotVectorize()
            return E.BufferLoad(e.buffer, tuple(idx))
        if isinstance(e, E.Cast):
            v = self.expr(e.value)
            if isinstance(v, E.Ramp) and e.dtype.is_integer and v.base.dtype.is_integer:
                # an index widened to int64 (a symbolic int64 dim beside int32 axes)
                return E.Ramp(_simplify(E.Cast(e.dtype, v.base)),
                              _simplify(E.Cast(e.dtype, v.stride)), self.lanes)
            return E.Cast(e.dtype.with_lanes(self.lanes), _bcast(v, self.lanes))
        if isinstance(e, E.Not):
            return E.Not(self.expr(e.a))
        if isinstance(e, E.Select):
            parts = [_bcast(self.expr(x), self.lanes)
                     for x in (e.condition, e.true_value, e.false_value)]
            return E.Select(*parts)
        if isinstance(e, E.Call) and e.op == "tir.if_then_else" and \
                not _depends(e.args[0], self.var):
            # a lane-uniform guard (a padding test): stays a scalar branch between vectors
            a, b = (_bcast(self.expr(x), self.lanes) for x in e.args[1:])
            return E.Call(e.dtype.with_lanes(self.lanes), e.op, (e.args[0], a, b))
        if isinstance(e, E.Call) and e.op != "tir.if_then_else":
            args = tuple(_bcast(self.expr(a), self.lanes) for a in e.args)
            return E.Call(e.dtype.with_lanes(self.lanes), e.op, args)
        raise _CannotVectorize()

    def _near(self, index) -> bool:
        """Whether the vector `index` reads lanes at constant offsets from one address, all
        within twice the lanes (`lane_offsets`: a block's lanes arranged by groups), which the
        codegen loads as one window and a shuffle."""
        split = lane_offsets(index)
        return split is not None and max(split[1]) - min(split[1]) < 2 * self.lanes

    def binary(self, e, a, b):
        ra, rb = isinstance(a, E.Ramp), isinstance(b, E.Ramp)
        sa, sb = a.dtype.lanes == 1, b.dtype.lanes == 1
        if isinstance(e, (E.Add, E.Sub)) and (ra or rb) and (ra or sa) and (rb or sb):
            op = E.Add if isinstance(e, E.Add) else E.Sub
            base_a, st_a = (a.base, a.stride) if ra else (a, E.make_const(a.dtype, 0))
            base_b, st_b = (b.base, b.stride) if rb else (b, E.make_const(b.dtype, 0))
            return E.Ramp(_simplify(op(base_a, base_b)), _simplify(op(st_a, st_b)), self.lanes)
        if isinstance(e, E.Mul) and ((ra and sb) or (rb and sa)):
            r, s = (a, b) if ra else (b, a)
            return E.Ramp(_simplify(r.base * s), _simplify(r.stride * s), self.lanes)
        a, b = _bcast(a, self.lanes), _bcast(b, self.lanes)
        return type(e)(a, b)


class _Vectorize(IRMutator):
    def __init__(self):
        super().__init__()
        self.units = {}  # enclosing loops of one iteration: var -> its value

    def visit_For(self, s):
        unit = isinstance(s.extent, E.IntImm) and s.extent.value == 1
        if unit:
            self.units[s.loop_var] = s.min
        s = self.generic_visit(s)
        if unit:
            del self.units[s.loop_var]
        if s.kind != ForKind.VECTORIZED:
            return s
        serial = For(s.loop_var, s.min, s.extent, ForKind.SERIAL, s.body, s.thread_binding,
                     s.annotations)
        if not isinstance(s.extent, E.IntImm) or s.extent.value < 1:
            return serial
        s = _narrowed(s, self.units)
        if s.extent.value < 1:
            return Evaluate(E.const(0))
        if s.extent.value == 1:
            return substitute(s.body, {s.loop_var: s.min})
        try:
            return _Vectorizer(s.loop_var, s.min, s.extent.value).stmt(s.body)
        except _CannotVectorize:
            return serial


def _terms(e):
    if isinstance(e, E.Add):
        return _terms(e.a) + _terms(e.b)
    return [e]


def _lane_bound(cond, var, units):
    """c when `cond` is `var + rest < b` with `b - rest` the integer constant c once the
    enclosing loops of one iteration (`units`: var -> its value) are substituted; else None."""
    if not isinstance(cond, E.LT):
        return None
    terms = _terms(cond.a)
    if sum(t is var for t in terms) != 1:
        return None
    rest = [t for t in terms if t is not var]
    if any(_depends(t, var) for t in rest) or _depends(cond.b, var):
        return None
    bound = cond.b
    for t in rest:
        bound = bound - t
    bound = _simplify(substitute(bound, units))
    return bound.value if isinstance(bound, E.IntImm) else None


def _narrowed(s: For, units) -> For:
    """A loop from 0 whose whole body is `if var + rest < b and other: body` (no else, b - rest
    constant) runs over [0, min(extent, b - rest)) with `if other: body` (the guard an uneven
    split leaves in the tail of a partitioned loop: `ji + 192 < 197` over 32 lanes is 5 lanes
    of vector code, not 32 scalar iterations that test each lane)."""
    body = s.body
    if not (isinstance(body, IfThenElse) and body.else_case is None
            and isinstance(s.min, E.IntImm) and s.min.value == 0):
        return s
    parts = conjuncts(body.condition)
    bounds = [_lane_bound(c, s.loop_var, units) for c in parts]
    if all(b is None for b in bounds):
        return s
    rest = [c for c, b in zip(parts, bounds) if b is None]
    if any(_depends(c, s.loop_var) for c in rest):
        return s
    extent = min([s.extent.value] + [b for b in bounds if b is not None])
    inner = body.then_case
    for c in reversed(rest):
        inner = IfThenElse(c, inner, None)
    return For(s.loop_var, s.min, E.const(max(extent, 0), s.extent.dtype), s.kind, inner,
               s.thread_binding, s.annotations)


def _vectorize_func(f: PrimFunc) -> PrimFunc:
    return _Vectorize().visit_func(f)


def vectorize(mod: IRModule) -> IRModule:
    return map_funcs(mod, _vectorize_func)
