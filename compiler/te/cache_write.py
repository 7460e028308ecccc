"""Schedule.cache_write, after TVM's (CacheWriteWithReLayout).

`CC = s.cache_write(C, scope)` computes C's expressions into a new stage CC (in `scope`) and
turns C into a copy of CC. The cache takes C's *loop order* as its layout: one axis per data
leaf of C's stage (named `<leaf>.c`, of that leaf's extent), so a C already split or reordered
gives a cache whose dimensions follow those loops (`split(i, 4)` then `reorder(io, j, ii)` gives a
cache of shape (I/4, J, 4)); C reads CC at the leaf values of its own indices. Where a split
does not divide its axis, the cache's padding is guarded (a condition of the reduction, or a
Select for other expressions). C's stage is reset to its root axes, as TVM's.

A list of tensors (`s.cache_write([C0, C1], "local")`) caches all outputs of one multi-output
te.compute and returns the caches in the same order; one tensor of such a compute caches all of
them and returns its own. Refused, as by TVM: a non-compute stage, and a stage whose reduction
axes were split or fused (only data-parallel axes can be relaid out).
"""
from __future__ import annotations

from typing import Dict, List

from ..arith import can_prove, relax, simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import substitute
from .iter_relation import Fuse, Rebase, Singleton, Split, pass_down, pass_up_values, split_factor
from .stage import Stage
from .tensor import ComputeOp, Tensor, TensorRegion
from .tensor_compute import TensorComputeOp


def _tensors(sch, tensor) -> List[Tensor]:
    many = isinstance(tensor, (list, tuple))
    tensors = list(tensor) if many else [tensor]
    if not tensors:
        raise ScheduleError("cache_write: give a tensor or a non-empty list of tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise ScheduleError(f"cache_write: {t!r} is not a tensor")
    stage = sch[tensors[0]]
    if not isinstance(stage.op, ComputeOp):
        kind = "a placeholder" if stage.is_placeholder else f"a {type(stage.op).__name__}"
        raise ScheduleError(f"cache_write: '{tensors[0].name}' is {kind}, not a te.compute; "
                            "only compute stages can write through a cache")
    for t in tensors[1:]:
        if sch[t] is not stage:
            raise ScheduleError(f"cache_write of a list: '{t.name}' and '{tensors[0].name}' "
                                "come from different operations; list the outputs of one "
                                "te.compute")
    if many:
        n = len(stage.op.outputs)
        if len(tensors) != n or len({t.value_index for t in tensors}) != n:
            raise ScheduleError(f"cache_write of a list: stage '{stage.name}' has {n} outputs; "
                                f"list each of them once (got {len(tensors)} tensors)")
    return tensors


def substitute_bodies(bodies, vmap) -> tuple:
    """`bodies` with `vmap` applied, inside Reduce combiners (result, identity) too; bodies that
    shared one combiner share the new one."""
    combiners: Dict[int, E.CommReducer] = {}

    def combiner(c: E.CommReducer) -> E.CommReducer:
        if id(c) not in combiners:
            combiners[id(c)] = E.CommReducer(c.lhs, c.rhs,
                                             tuple(substitute(x, vmap) for x in c.result),
                                             tuple(substitute(x, vmap) for x in c.identity))
        return combiners[id(c)]

    axes: Dict[int, E.IterVar] = {}

    def axis(iv: E.IterVar) -> E.IterVar:
        """A reduction axis whose range reads a substituted variable (a reduction over
        (0, i)), over the substituted range; one new axis per old one."""
        if id(iv) not in axes:
            lo, ext = substitute(iv.dom.min, vmap), substitute(iv.dom.extent, vmap)
            axes[id(iv)] = iv if lo is iv.dom.min and ext is iv.dom.extent else \
                E.IterVar(E.Range(lo, ext), iv.var, iv.kind, iv.thread_tag)
        return axes[id(iv)]

    out = []
    for b in bodies:
        b = substitute(b, vmap)
        if isinstance(b, E.Reduce):
            b = E.Reduce(combiner(b.combiner), b.source, tuple(axis(iv) for iv in b.axis),
                         b.condition, b.value_index, b.init, b.dtype)
        out.append(b)
    return tuple(out)


def _pass_down_values(relations, dom, values) -> None:
    """Leaf values from root values (the inverse of pass_up_values)."""
    for r in relations:
        if isinstance(r, Split):
            v, f = values[r.parent], split_factor(r, dom)
            values[r.outer] = simplify(E.FloorDiv(v, f))
            values[r.inner] = simplify(E.FloorMod(v, f))
        elif isinstance(r, Fuse):
            values[r.fused] = simplify(values[r.outer] * dom[r.inner].extent + values[r.inner])
        elif isinstance(r, Rebase):
            values[r.rebased] = values[r.parent]
        elif isinstance(r, Singleton):
            values[r.iter] = E.const(0, r.iter.var.dtype)


def _guarded(body: E.PrimExpr, preds: List[E.PrimExpr]) -> E.PrimExpr:
    if not preds:
        return body
    cond = preds[0]
    for p in preds[1:]:
        cond = E.logical_and(cond, p)
    if isinstance(body, E.Reduce):
        c = cond if E.is_const_int(body.condition, 1) else E.logical_and(body.condition, cond)
        return E.Reduce(body.combiner, body.source, body.axis, c, body.value_index, body.init,
                        body.dtype)
    return E.Select(cond, body, E.make_const(body.dtype, 0))


def cache_write_relayout(sch, tensor, scope: str):
    tensors = _tensors(sch, tensor)
    stage: Stage = sch[tensors[0]]
    op: ComputeOp = stage.op
    reduce_roots = set(op.reduce_axis)
    for leaf in stage.leaf_iter_vars:
        if leaf.kind == E.IterKind.REDUCE and leaf not in reduce_roots:
            raise ScheduleError(f"cache_write on stage '{stage.name}': its reduction axis was "
                                f"split or fused (leaf '{leaf.name}'); only data-parallel axes "
                                "can be relaid out, so call cache_write before scheduling the "
                                "reduction axes (then schedule them on the cache stage)")
    dom = {iv: iv.dom for iv in list(op.axis) + list(op.reduce_axis)}
    pass_down(stage.relations, dom)
    data_leaves = [iv for iv in stage.leaf_iter_vars if iv not in reduce_roots]
    new_axis = tuple(E.IterVar(E.Range(E.const(0, iv.var.dtype), dom[iv].extent),
                               E.Var(iv.name + ".c", iv.var.dtype)) for iv in data_leaves)
    # the cache computes C's expressions at C's root values, written in the cache's axes
    values = {leaf: new.var for leaf, new in zip(data_leaves, new_axis)}
    pass_up_values(stage.relations, dom, values)
    ranges = {new.var: (E.const(0), simplify(new.dom.extent - 1)) for new in new_axis}
    preds = []
    for iv in stage.all_iter_vars:
        if iv in values and iv not in data_leaves and iv.kind != E.IterKind.REDUCE:
            r = relax(values[iv], ranges)
            hi = simplify(dom[iv].extent - 1)
            if r is None or not can_prove(r[1] <= hi):
                preds.append(values[iv] < dom[iv].extent)
    vmap = {iv.var: simplify(iv.dom.min + values[iv]) for iv in op.axis}
    bodies = tuple(_guarded(b, preds) for b in substitute_bodies(op.body, vmap))
    if isinstance(op, TensorComputeOp):  # the cache is computed by the intrinsic
        if data_leaves != list(op.axis):
            raise ScheduleError(f"cache_write on stage '{stage.name}': a stage computed by a "
                                "tensor intrinsic can be cached only before its axes are "
                                "split or fused")
        regions = [TensorRegion(r.tensor, [E.Range(substitute(x.min, vmap),
                                                   substitute(x.extent, vmap))
                                           for x in r.ranges]) for r in op.regions]
        cache_op = TensorComputeOp(f"{op.name}.{scope}", op.tag, op.attrs, new_axis, bodies,
                                   op.intrin, op.outer, op.call_reduce_axis, regions,
                                   op.binding)
    else:
        cache_op = ComputeOp(f"{op.name}.{scope}", op.tag, op.attrs, new_axis, bodies)
    # C reads the cache at the leaf values of its root indices
    down = {iv: iv.var for iv in op.axis}
    down.update({iv: iv.var for iv in op.reduce_axis})
    _pass_down_values(stage.relations, dom, down)
    args = tuple(down[iv] for iv in data_leaves)
    new_op = ComputeOp(op.name, op.tag, op.attrs, op.axis,
                       tuple(t(*args) for t in cache_op.outputs))
    cache_stage = Stage(cache_op, sch)
    cache_stage.scope = scope
    cache_stage.group = stage.group
    if stage.group is not None:
        stage.group.num_child_stages += 1
    stage.op = new_op
    sch.stage_map[new_op] = stage  # tensors of the ops it ran before still map to it
    stage.all_iter_vars = list(new_op.axis)
    stage.leaf_iter_vars = list(new_op.axis)
    stage.relations = []
    if isinstance(op, TensorComputeOp):
        stage.tensorized = None
        stage.iter_attrs = {}
        cache_op.schedule_stage(cache_stage)
    sch.stages.insert(sch.stages.index(stage), cache_stage)
    sch.stage_map[cache_op] = cache_stage
    caches = [cache_op.outputs[t.value_index] for t in tensors]
    return caches if isinstance(tensor, (list, tuple)) else caches[0]

