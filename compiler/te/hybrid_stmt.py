"""The statement of a hybrid stage (`hybrid_op.py`) with its schedule applied and its tensors
bound to buffers, for lowering.

The schedule rewrites the script's own loops, in three steps:
1. the relations, in order: a split loop becomes an outer and an inner loop whose body reads
   `outer * factor + inner` for the old variable, guarded by `likely(value < extent)` where the
   factor may not divide the extent (the guard goes inside the loops the body nests
   perfectly); two fused loops (the inner one the whole body of the outer one) become one loop
   over the product of their extents; a rebased loop takes its new variable; a singleton axis
   is a unit loop around everything;
2. the order: the loops, outermost first in source order, take the headers of the stage's leaf
   axes in their order (reorder permutes loops of one perfect nest);
3. the annotations: a leaf axis marked parallel, vectorized or unrolled gives its loop that
   kind, one bound to a thread axis becomes a thread-binding loop.
Then output placeholders store into the operation's outputs, every tensor read or written
takes the buffer lowering chose for it, a ProducerRealize is an Allocate of its own buffer, a
`thread_extent` attribute (a script's `bind`) a thread-binding loop, and an assertion's message
the message parts of a lowered AssertStmt. The whole is marked as TVM marks it, an
`extern_scope` attribute (which code generators pass through).
"""
from __future__ import annotations

from typing import Callable, Dict

from ..arith import can_prove, simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer
from ..tir.functor import IRMutator, substitute
from ..tir.op import likely
from ..tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    ProducerRealize,
    ProducerStore,
    Stmt,
)
from .bound import Bounds
from .hybrid_op import gather_loops
from .iter_relation import Fuse, Rebase, Singleton, Split, split_factor
from .stage import Stage
from .tensor import Tensor, TensorLoad


def _as_dtype(e: E.PrimExpr, dtype) -> E.PrimExpr:
    return e if str(e.dtype) == str(dtype) else E.cast(dtype, e)


class _Rewrite(IRMutator):
    """Replaces the loop over `var` by `fn(loop)`; `found` counts the loops replaced."""

    def __init__(self, var: E.Var, fn: Callable[[For], Stmt]):
        self.var, self.fn, self.found = var, fn, 0

    def visit_For(self, s: For) -> Stmt:
        if s.loop_var is self.var:
            self.found += 1
            return self.fn(s)
        return self.generic_visit(s)


def _rewrite_loop(stage: Stage, prim: str, var: E.Var, body: Stmt, fn) -> Stmt:
    r = _Rewrite(var, fn)
    out = r.visit(body)
    if r.found != 1:
        raise ScheduleError(f"{prim} on hybrid stage '{stage.name}': the loop of axis "
                            f"'{var.name}' occurs {r.found} times in the script's statement, "
                            "not once")
    return out


def _guard_innermost(body: Stmt, cond: E.PrimExpr) -> Stmt:
    """`body` run where `cond` holds, the test placed inside the loops that `body` nests
    perfectly (so they stay a perfect nest that later relations and reorder can rearrange)."""
    if isinstance(body, For):
        return For(body.loop_var, body.min, body.extent, body.kind,
                   _guard_innermost(body.body, cond), body.thread_binding, body.annotations)
    return IfThenElse(cond, body)


def _split(stage: Stage, r: Split, dom, body: Stmt) -> Stmt:
    outer, inner = r.outer, r.inner
    factor = _as_dtype(split_factor(r, dom), r.parent.var.dtype)

    def fn(loop: For) -> Stmt:
        value = simplify(outer.var * factor + inner.var)
        new = substitute(loop.body, {loop.loop_var: value})
        outer_ext, inner_ext = dom[outer].extent, dom[inner].extent
        if not can_prove(outer_ext * inner_ext <= loop.extent):
            new = _guard_innermost(new, likely(value < loop.extent))
        new = For(inner.var, E.const(0, inner.var.dtype), inner_ext, loop.kind, new)
        return For(outer.var, E.const(0, outer.var.dtype), outer_ext, loop.kind, new)

    return _rewrite_loop(stage, "split", r.parent.var, body, fn)


def _fuse(stage: Stage, r: Fuse, body: Stmt) -> Stmt:
    fused = r.fused.var

    def fn(loop: For) -> Stmt:
        inner = loop.body
        if not isinstance(inner, For) or inner.loop_var is not r.inner.var:
            raise ScheduleError(f"fuse on hybrid stage '{stage.name}': the loop of axis "
                                f"'{r.inner.name}' is not the whole body of the loop of axis "
                                f"'{r.outer.name}'; only perfectly nested loops fuse")
        ext_i = _as_dtype(inner.extent, fused.dtype)
        values = {loop.loop_var: _as_dtype(simplify(E.FloorDiv(fused, ext_i)), loop.loop_var.dtype),
                  inner.loop_var: _as_dtype(simplify(E.FloorMod(fused, ext_i)),
                                            inner.loop_var.dtype)}
        extent = simplify(_as_dtype(loop.extent, fused.dtype) * ext_i)
        return For(fused, E.const(0, fused.dtype), extent, loop.kind,
                   substitute(inner.body, values))

    return _rewrite_loop(stage, "fuse", r.outer.var, body, fn)


def _rebase(stage: Stage, r: Rebase, body: Stmt) -> Stmt:
    new = r.rebased.var

    def fn(loop: For) -> Stmt:
        value = new if E.is_const_int(loop.min, 0) else new + loop.min
        return For(new, E.const(0, new.dtype), loop.extent, loop.kind,
                   substitute(loop.body, {loop.loop_var: value}))

    return _rewrite_loop(stage, "normalize", r.parent.var, body, fn)


def _apply_relations(stage: Stage, dom, body: Stmt) -> Stmt:
    for r in stage.relations:
        if isinstance(r, Split):
            body = _split(stage, r, dom, body)
        elif isinstance(r, Fuse):
            body = _fuse(stage, r, body)
        elif isinstance(r, Rebase):
            body = _rebase(stage, r, body)
        elif isinstance(r, Singleton):
            body = For(r.iter.var, E.const(0, r.iter.var.dtype), E.const(1, r.iter.var.dtype),
                       ForKind.SERIAL, body)
    return body


def _nests(body: Stmt) -> Dict[E.Var, int]:
    """Loop variable -> the number of its perfect nest (loops each the whole body of the one
    around it)."""
    out: Dict[E.Var, int] = {}
    for loop in gather_loops(body):
        if loop.loop_var not in out:
            out[loop.loop_var] = len(set(out.values()))
        inner = loop.body
        if isinstance(inner, For):
            out[inner.loop_var] = out[loop.loop_var]
    return out


class _Headers(IRMutator):
    def __init__(self, headers: Dict[E.Var, For]):
        self.headers = headers

    def visit_For(self, s: For) -> Stmt:
        body = self.visit(s.body)
        h = self.headers.get(s.loop_var)
        if h is None:
            return s if body is s.body else For(s.loop_var, s.min, s.extent, s.kind, body,
                                                s.thread_binding, s.annotations)
        return For(h.loop_var, h.min, h.extent, h.kind, body, h.thread_binding, h.annotations)


def _apply_order(stage: Stage, body: Stmt) -> Stmt:
    loops = gather_loops(body)
    leaves = stage.leaf_iter_vars
    if len(loops) != len(leaves):
        raise ScheduleError(f"hybrid stage '{stage.name}': the script has {len(loops)} loops "
                            f"but the stage {len(leaves)} leaf axes")
    if all(lp.loop_var is iv.var for lp, iv in zip(loops, leaves)):
        return body
    by_var = {lp.loop_var: lp for lp in loops}
    nest = _nests(body)
    headers: Dict[E.Var, For] = {}
    for lp, iv in zip(loops, leaves):
        if lp.loop_var is iv.var:
            continue
        if iv.var not in by_var or nest[iv.var] != nest[lp.loop_var]:
            raise ScheduleError(f"reorder on hybrid stage '{stage.name}': axis '{iv.name}' "
                                f"would take the place of loop '{lp.loop_var.name}', which is "
                                "not in its perfect loop nest; only perfectly nested loops "
                                "reorder")
        headers[lp.loop_var] = by_var[iv.var]
    return _Headers(headers).visit(body)


def _apply_annotations(stage: Stage, body: Stmt) -> Stmt:
    for iv in stage.leaf_iter_vars:
        attr = stage.iter_attrs.get(iv)
        if attr is None:
            continue

        def fn(loop: For, attr=attr, iv=iv) -> Stmt:
            if attr.kind == ForKind.VECTORIZED and not isinstance(loop.extent, E.IntImm):
                raise ScheduleError(f"vectorize on hybrid stage '{stage.name}': axis "
                                    f"'{iv.name}' has the non-constant extent {loop.extent}; "
                                    "split it by a constant factor and vectorize the inner "
                                    "axis")
            out: Stmt = For(loop.loop_var, loop.min, loop.extent, attr.kind, loop.body,
                            attr.thread, loop.annotations)
            for key, value in reversed(attr.pragmas):
                out = AttrStmt(iv, f"pragma_{key}", value, out)
            return out

        body = _rewrite_loop(stage, "annotate", iv.var, body, fn)
    return body


class _BindTensors(IRMutator):
    def __init__(self, stage: Stage, outputs: Dict[Tensor, Tensor], resolve: Callable):
        self.stage, self.outputs, self.resolve = stage, outputs, resolve
        self.local: Dict[Tensor, Buffer] = {}

    def _buffer(self, t: Tensor):
        t = self.outputs.get(t, t)
        if t in self.local:
            return self.local[t], ()
        buf, offsets = self.resolve(t)
        if not all(E.is_const_int(o, 0) for o in offsets):
            raise ScheduleError(f"hybrid stage '{self.stage.name}': tensor '{t.name}' is "
                                "stored as a region, not whole; compute it at the root")
        return buf, ()

    def _indices(self, indices) -> tuple:
        return tuple(self.visit(i) for i in indices)

    def visit_ProducerRealize(self, s: ProducerRealize) -> Stmt:
        t = s.producer
        shape = tuple(r.extent for r in s.bounds)
        buf = decl_buffer(shape, t.dtype, t.name, scope=s.storage_scope or "global")
        self.local[t] = buf
        body = self.visit(s.body)
        del self.local[t]
        return Allocate(buf, body)

    def visit_ProducerStore(self, s: ProducerStore) -> Stmt:
        buf, _ = self._buffer(s.producer)
        value = self.visit(s.value)
        if value.dtype != buf.dtype:
            value = E.cast(buf.dtype, value)
        return BufferStore(buf, value, self._indices(s.indices))

    def visit_TensorLoad(self, e: TensorLoad) -> E.PrimExpr:
        buf, _ = self._buffer(e.tensor)
        return E.BufferLoad(buf, self._indices(e.indices))

    def visit_AttrStmt(self, s: AttrStmt) -> Stmt:
        if s.key == "thread_extent" and isinstance(s.node, E.IterVar):
            iv = s.node
            return For(iv.var, E.const(0, iv.var.dtype), s.value, ForKind.THREAD_BINDING,
                       self.visit(s.body), iv)
        return AttrStmt(s.node, s.key, self.visit(s.value), self.visit(s.body))

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:
        message = (s.message.value,) if isinstance(s.message, E.StringImm) else s.message
        return AssertStmt(self.visit(s.condition), s.kind, message, self.visit(s.body))


def make_hybrid_stmt(stage: Stage, bounds: Bounds, resolve: Callable) -> Stmt:
    """The hybrid stage's statement scheduled and over buffers; `resolve(tensor) -> (buffer,
    offsets)` gives the storage of the tensors it reads and writes (whole tensors)."""
    op = stage.op
    body = _apply_relations(stage, bounds.dom, op.body)
    body = _apply_order(stage, body)
    body = _apply_annotations(stage, body)
    outputs = dict(zip(op.output_placeholders, op.outputs))
    body = _BindTensors(stage, outputs, resolve).visit(body)
    return AttrStmt(E.const(0), "extern_scope", E.const(0), body)

