"""A Schedule: the stages of every operation reachable from the outputs, in producer-before-
consumer order, plus the primitives that add stages (cache_read, cache_write)."""
from __future__ import annotations

import copy
from typing import Dict, List, Sequence, Union

from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import IRMutator, substitute
from .iter_relation import Rebase
from .operation import compute
from .stage import Stage
from .tensor import ComputeOp, Operation, Tensor, TensorLoad


class Schedule:
    def __init__(self, outputs: Sequence[Operation]):
        self.outputs = list(outputs)
        self.stages: List[Stage] = []
        self.stage_map: Dict[Operation, Stage] = {}
        for op in _post_order(self.outputs):
            st = Stage(op, self)
            self.stages.append(st)
            self.stage_map[op] = st
        for op in self.outputs:
            self.stage_map[op].is_output = True

    def __getitem__(self, key: Union[Tensor, Operation]) -> Stage:
        op = key.op if isinstance(key, Tensor) else key
        if op not in self.stage_map:
            raise ScheduleError(f"'{getattr(op, 'name', op)}' is not an operation of this "
                                "schedule (create_schedule reaches only what the outputs read)")
        return self.stage_map[op]

    def stage_of(self, tensor: Tensor) -> Stage:
        return self[tensor]

    def consumers(self, stage: Stage) -> List[Stage]:
        return [s for s in self.stages if not s.is_placeholder
                and any(self.stage_map.get(t.op) is stage for t in s.op.input_tensors)]

    def reads_transitively(self, consumer: Stage, producer: Stage) -> bool:
        todo, seen = [consumer], set()
        while todo:
            s = todo.pop()
            if id(s) in seen or s.is_placeholder:
                continue
            seen.add(id(s))
            for t in s.op.input_tensors:
                p = self.stage_map.get(t.op)
                if p is producer:
                    return True
                if p is not None:
                    todo.append(p)
        return False

    # ---- copies ------------------------------------------------------------------------------
    def copy(self) -> "Schedule":
        """A schedule with its own stages (the same operations and axes, the same loop
        structure and attachments): scheduling it leaves this one unchanged."""
        out = object.__new__(Schedule)
        out.outputs = list(self.outputs)
        twin: Dict[Stage, Stage] = {}
        for st in self.stages:
            c = copy.copy(st)
            c.schedule = out
            c.all_iter_vars, c.leaf_iter_vars = list(st.all_iter_vars), list(st.leaf_iter_vars)
            c.relations = list(st.relations)
            c.iter_attrs = {iv: copy.copy(a) for iv, a in st.iter_attrs.items()}
            for a in c.iter_attrs.values():
                a.pragmas = list(a.pragmas)
            twin[st] = c
        for c in twin.values():
            if c.attach_stage is not None:
                c.attach_stage = twin[c.attach_stage]
        out.stages = [twin[st] for st in self.stages]
        out.stage_map = {op: twin[st] for op, st in self.stage_map.items()}
        return out

    def normalize(self) -> "Schedule":
        """The normalized schedule, as TVM's: a copy in which every root axis that is still a
        loop (not split, fused or bound to a thread) is replaced by a rebased axis over
        [0, extent), so every loop starts at 0 (a reduce_axis((2, 10)) loop runs over 0..7 and
        its uses read k + 2). This schedule is left unchanged. Lowering already builds every loop
        from 0 this way, so both lower to the same loops."""
        out = self.copy()
        rebased: Dict[E.IterVar, E.IterVar] = {}
        for st in out.stages:
            if st.is_placeholder or st.attach_type == "inline":
                continue
            for iv in list(st.op.axis) + list(st.op.reduce_axis):
                attr = st.iter_attrs.get(iv)
                if iv not in st.leaf_iter_vars or (attr is not None and attr.thread is not None):
                    continue
                new = E.IterVar(None, E.Var(iv.var.name, iv.var.dtype), iv.kind)
                st.relations.append(Rebase(iv, new))
                if attr is not None:
                    st.iter_attrs[new] = attr
                st.all_iter_vars.append(new)
                st.leaf_iter_vars[st.leaf_iter_vars.index(iv)] = new
                rebased[iv] = new
        for st in out.stages:
            if st.attach_type == "scope" and st.attach_ivar in rebased:
                st.attach_ivar = rebased[st.attach_ivar]
        return out

    # ---- cache stages ------------------------------------------------------------------------
    def cache_read(self, tensor: Tensor, scope: str, readers) -> Tensor:
        """A stage copying `tensor` into `scope`; `readers` (ops, tensors or stages) read the
        copy instead."""
        producer = self[tensor]
        readers = readers if isinstance(readers, (list, tuple)) else [readers]
        reader_stages = [r if isinstance(r, Stage) else self[r] for r in readers]
        for r in reader_stages:
            if r.is_placeholder or tensor not in r.op.input_tensors:
                raise ScheduleError(f"cache_read of '{tensor.name}': stage '{r.name}' does not "
                                    f"read '{tensor.name}'")
        cache = compute(tensor.shape, lambda *i: tensor[i], name=f"{tensor.name}.{scope}")
        stage = Stage(cache.op, self)
        stage.scope = scope
        for r in reader_stages:
            _replace_op(self, r, _rewrite_op(r.op, {tensor: cache}))
        first = min(self.stages.index(r) for r in reader_stages)
        first = max(first, self.stages.index(producer) + 1)
        self.stages.insert(first, stage)
        self.stage_map[cache.op] = stage
        return cache

    def cache_write(self, tensor: Tensor, scope: str) -> Tensor:
        """Compute `tensor` into a new stage in `scope`; the original stage copies it out."""
        stage = self[tensor]
        op = stage.op
        if not isinstance(op, ComputeOp):
            raise ScheduleError(f"cache_write: '{tensor.name}' is a placeholder, not a compute")
        if stage.relations or stage.attach_type != "root":
            raise ScheduleError(f"cache_write on stage '{stage.name}' must come before split, "
                                "fuse, reorder or compute_at on it")
        new_axis = tuple(E.IterVar(iv.dom, E.Var(iv.var.name + ".c", iv.var.dtype), iv.kind)
                         for iv in op.axis)
        vmap = {iv.var: n.var for iv, n in zip(op.axis, new_axis)}

        body = _substitute_bodies(op.body, vmap)
        cache_op = ComputeOp(f"{op.name}.{scope}", op.tag, op.attrs, new_axis, body)
        idx = tuple(iv.var for iv in op.axis)
        new_op = ComputeOp(op.name, op.tag, op.attrs, op.axis,
                           tuple(t[idx] for t in cache_op.outputs))
        cache_stage = Stage(cache_op, self)
        cache_stage.scope = scope
        _replace_op(self, stage, new_op)
        stage.all_iter_vars = list(new_op.axis)
        stage.leaf_iter_vars = list(new_op.axis)
        self.stages.insert(self.stages.index(stage), cache_stage)
        self.stage_map[cache_op] = cache_stage
        return cache_op.outputs[tensor.value_index] if len(cache_op.outputs) > 1 \
            else cache_op.outputs[0]


def _substitute_bodies(bodies, vmap) -> tuple:
    """`bodies` with `vmap` applied, inside Reduce combiners (result, identity) too; bodies that
    shared one combiner share the new one."""
    combiners: Dict[int, E.CommReducer] = {}

    def combiner(c: E.CommReducer) -> E.CommReducer:
        if id(c) not in combiners:
            combiners[id(c)] = E.CommReducer(c.lhs, c.rhs,
                                             tuple(substitute(x, vmap) for x in c.result),
                                             tuple(substitute(x, vmap) for x in c.identity))
        return combiners[id(c)]

    out = []
    for b in bodies:
        b = substitute(b, vmap)
        if isinstance(b, E.Reduce):
            b = E.Reduce(combiner(b.combiner), b.source, b.axis, b.condition, b.value_index,
                         b.init, b.dtype)
        out.append(b)
    return tuple(out)


class _ReplaceLoads(IRMutator):
    def __init__(self, vmap: Dict[Tensor, Tensor]):
        self.vmap = vmap

    def visit_TensorLoad(self, e: TensorLoad):
        e = self.generic_visit(e)
        t = self.vmap.get(e.tensor)
        return e if t is None else TensorLoad(t, e.indices)


def _rewrite_op(op: ComputeOp, vmap: Dict[Tensor, Tensor]) -> ComputeOp:
    body = tuple(_ReplaceLoads(vmap).visit(b) for b in op.body)
    return ComputeOp(op.name, op.tag, op.attrs, op.axis, body)


def _replace_op(sch: Schedule, stage: Stage, new_op: Operation) -> None:
    """The stage now runs `new_op`; tensors of every op it ran before still map to it."""
    stage.op = new_op
    sch.stage_map[new_op] = stage


def _post_order(outputs: Sequence[Operation]) -> List[Operation]:
    order: List[Operation] = []
    seen = set()

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for op in outputs:
        visit(op)
    return order


def create_schedule(ops) -> Schedule:
    """A schedule for the given output operation(s) (or tensors) and everything they read."""
    ops = ops if isinstance(ops, (list, tuple)) else [ops]
    return Schedule([o.op if isinstance(o, Tensor) else o for o in ops])
