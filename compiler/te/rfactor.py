"""Schedule.rfactor: factor a reduction over one of its reduce axes, after TVM's.

    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)            # BF[ki, i] = sum over ko of A[i, ko * 16 + ki]
                                     # B[i]     = sum over ki.v of BF[ki.v, i]

`axis` is a reduce leaf of B's stage. Every axis related to it through splits and fuses
("touched": the reduce axis it came from and that axis's other parts) leaves B: the new stage
BF (named `<B>.rf`) has B's data axes with `axis` inserted as a data axis at `factor_axis`
(0 = outermost; negative counts from the end), and reduces over B's untouched reduce axes and
the other touched leaves. Where the split does not divide the reduce axis, BF's reduction is
guarded (`ko * 16 + ki < m`), and B's `where=` condition stays with BF. B's stage then reduces
BF over a new axis `<axis>.v` with the same reducer (tuple reducers included); its loops are
reset to its new root axes. Returns BF (a list of tensors for a multi-output reduction).

Refused with ScheduleError, as TVM refuses them: a stage that is not a reduction, an axis that
is not a reduce leaf of it, an axis whose range does not start at 0, a reduction with init=.
"""
from __future__ import annotations

from typing import Dict, List, Set

from ..arith import can_prove, relax, simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import substitute
from .iter_relation import Fuse, Rebase, Relation, Split, pass_down, pass_up_values
from .stage import Stage
from .tensor import ComputeOp, Tensor


def _fail(tensor: Tensor, msg: str):
    raise ScheduleError(f"rfactor of '{tensor.name}': {msg}")


def _touched(stage: Stage, axis: E.IterVar) -> Set[E.IterVar]:
    """Axes related to `axis` by the stage's relations: up to its root, then down from it."""
    hit = {axis}
    for r in reversed(stage.relations):
        if isinstance(r, Split) and (r.outer in hit or r.inner in hit):
            hit.add(r.parent)
        elif isinstance(r, Fuse) and r.fused in hit:
            hit.update((r.outer, r.inner))
        elif isinstance(r, Rebase) and r.rebased in hit:
            hit.add(r.parent)
    for r in stage.relations:
        if isinstance(r, Split) and r.parent in hit:
            hit.update((r.outer, r.inner))
        elif isinstance(r, Fuse) and (r.outer in hit or r.inner in hit):
            hit.add(r.fused)
        elif isinstance(r, Rebase) and r.parent in hit:
            hit.add(r.rebased)
    return hit


def _relation_touched(r: Relation, hit: Set[E.IterVar]) -> bool:
    if isinstance(r, (Split, Rebase)):
        return r.parent in hit
    if isinstance(r, Fuse):
        return r.fused in hit
    return False


def _check(stage: Stage, tensor: Tensor, axis) -> ComputeOp:
    op = stage.op
    if not isinstance(op, ComputeOp) or not op.reduce_axis:
        _fail(tensor, f"stage '{stage.name}' is not a reduction (te.sum, te.max, ...); rfactor "
                      "factors the reduction axis of one")
    if not isinstance(axis, E.IterVar):
        _fail(tensor, f"{axis!r} is not an axis (IterVar)")
    if axis not in stage.leaf_iter_vars:
        if axis in stage.all_iter_vars:
            _fail(tensor, f"axis '{axis.name}' is not a leaf axis any more (it was split or "
                          "fused); pass one of the axes that split/fuse returned")
        _fail(tensor, f"axis '{axis.name}' is not an axis of stage '{stage.name}'")
    if axis.kind != E.IterKind.REDUCE:
        _fail(tensor, f"axis '{axis.name}' is a data axis; rfactor factors a reduction axis "
                      f"(one of {', '.join(repr(a.name) for a in op.reduce_axis)}, or a part "
                      "of one that split returned)")
    if any(b.init for b in op.body):
        _fail(tensor, "the reduction has an init= value, which every partial result would "
                      "include; reduce without init= and add the value in a later stage")
    return op


def rfactor(sch, tensor: Tensor, axis, factor_axis: int = 0):
    stage = sch[tensor]
    op = _check(stage, tensor, axis)
    ndim = len(op.axis)
    pos = factor_axis if factor_axis >= 0 else ndim + 1 + factor_axis
    if not 0 <= pos <= ndim:
        _fail(tensor, f"factor_axis={factor_axis} is out of range for a result of {ndim + 1} "
                      f"dimensions (use 0..{ndim} or -1..-{ndim + 1})")
    hit = _touched(stage, axis)
    for iv in op.axis:
        if iv in hit:
            _fail(tensor, f"axis '{axis.name}' is fused with the data axis '{iv.name}'")
    rels = [r for r in stage.relations if _relation_touched(r, hit)]
    dom: Dict[E.IterVar, E.Range] = {iv: iv.dom for iv in op.reduce_axis if iv in hit}
    pass_down(rels, dom)
    if not E.is_const_int(dom[axis].min, 0):
        _fail(tensor, f"axis '{axis.name}' ranges over [{dom[axis].min}, ...); rfactor needs an "
                      "axis starting at 0 (split it and factor a part, or normalize() first)")
    leaves = [iv for iv in stage.leaf_iter_vars if iv in hit]
    values = {iv: iv.var for iv in leaves}
    pass_up_values(rels, dom, values)
    ranges = {iv.var: (E.const(0), simplify(dom[iv].extent - 1)) for iv in leaves}
    preds = []
    for iv in stage.all_iter_vars:  # a part that may pass its extent (non-divisible split)
        if iv in hit and iv not in leaves and iv in values:
            r = relax(values[iv], ranges)
            if r is None or not can_prove(r[1] <= simplify(dom[iv].extent - 1)):
                preds.append(values[iv] < dom[iv].extent)
    red = op.body[tensor.value_index]
    vmap = {iv.var: simplify(iv.dom.min + values[iv]) for iv in op.reduce_axis if iv in hit}
    cond = substitute(red.condition, vmap)
    for p in preds:
        cond = p if E.is_const_int(cond, 1) else E.logical_and(cond, p)
    factored = E.IterVar(E.Range(E.const(0, axis.var.dtype), dom[axis].extent), axis.var)
    bf_axis = list(op.axis)
    bf_axis.insert(pos, factored)
    bf_reduce = [iv for iv in op.reduce_axis if iv not in hit] + \
        [E.IterVar(E.Range(E.const(0, iv.var.dtype), dom[iv].extent), iv.var, E.IterKind.REDUCE)
         for iv in leaves if iv is not axis]
    sources = tuple(substitute(s, vmap) for s in red.source)
    bf_body = tuple(E.Reduce(red.combiner, sources, tuple(bf_reduce), cond, k, (),
                             sources[k].dtype) for k in range(len(sources)))
    if not bf_reduce:  # nothing left to reduce: BF is the (guarded) source itself
        bf_body = tuple(s if E.is_const_int(cond, 1) else
                        E.Select(cond, s, red.combiner.identity[k])
                        for k, s in enumerate(sources))
    bf_op = ComputeOp(op.name + ".rf", op.tag, op.attrs, tuple(bf_axis), bf_body)
    # B reduces BF over the factored axis
    new_axis = tuple(E.IterVar(E.Range(E.make_const(s.dtype, 0), s), E.Var(f"ax{d}", s.dtype))
                     for d, s in enumerate(op.outputs[0].shape))
    kv = E.IterVar(E.Range(E.const(0, axis.var.dtype), dom[axis].extent),
                   E.Var(axis.name + ".v", axis.var.dtype), E.IterKind.REDUCE)
    idx: List[E.PrimExpr] = [iv.var for iv in new_axis]
    idx.insert(pos, kv.var)
    loads = tuple(t(*idx) for t in bf_op.outputs)
    repl_body = tuple(E.Reduce(red.combiner, loads, (kv,), E.const(True), k, (), loads[k].dtype)
                      for k in range(len(loads)))
    repl_op = ComputeOp(op.name, op.tag, op.attrs, new_axis, repl_body)
    bf_stage = Stage(bf_op, sch)
    bf_stage.group = stage.group
    if stage.group is not None:
        stage.group.num_child_stages += 1
    sch.stages.insert(sch.stages.index(stage), bf_stage)
    sch.stage_map[bf_op] = bf_stage
    stage.op = repl_op
    sch.stage_map[repl_op] = stage  # B's tensors (of the ops it ran before) still map to it
    stage.all_iter_vars = list(new_axis) + [kv]
    stage.leaf_iter_vars = list(stage.all_iter_vars)
    stage.relations = []
    return bf_op.outputs[0] if len(bf_op.outputs) == 1 else list(bf_op.outputs)
