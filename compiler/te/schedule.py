"""A Schedule: the stages of every operation reachable from the outputs, in producer-before-
consumer order, plus the primitives that add stages (cache_read, cache_write, rfactor) and
groups of stages (create_group; compiler/te/group.py). TVM's functions over a schedule live
here too, so `te.schedule.InferBound(s)` and `te.schedule.AutoInlineInjective(s)` read as TVM's.
"""
from __future__ import annotations

import copy
from typing import Dict, List, Sequence, Union

from microruntime.object_generic import Map, make_map

from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer
from ..tir.expr import IterVar
from ..tir.functor import IRMutator
from ..transform import CONFIG_OPTIONS, PassContext, PassContextError
from .auto_inline import auto_inline_broadcast, auto_inline_elemwise, auto_inline_injective
from .cache_write import cache_write_relayout
from .graph import create_read_graph, post_dfs_order
from .group import GroupStage, copy_groups, create_group, legalize_attach_points
from .iter_relation import Fuse, Rebase, Singleton, Split
from .operation import compute
from .rfactor import rfactor
from .scan import setup_scans
from .scan_analysis import scan_fix_point_analysis, scan_get_body
from .schedule_ops import infer_schedule_bounds, schedule_ops
from .stage import Stage
from .tensor import ComputeOp, Operation, Tensor, TensorLoad, TensorRegion
from .tensor_compute import TensorComputeOp

KEEP_SCHEDULE_RECORD = "te.keep_schedule_record"


def _bool_option(key: str, value) -> bool:
    if not isinstance(value, (bool, int)):
        raise PassContextError(f"config {key!r} takes a bool, got {value!r}")
    return bool(value)


CONFIG_OPTIONS.setdefault(KEEP_SCHEDULE_RECORD, (
    _bool_option, "create_schedule keeps a copy of the schedule after each primitive "
                  "(Schedule.schedule_record, Schedule.primitive_record)"))


class Schedule:
    def __init__(self, outputs: Sequence[Operation]):
        self.outputs = list(outputs)
        self.stages: List[Stage] = []
        self.stage_map: Dict[Operation, Stage] = {}
        self.groups: List[GroupStage] = []
        # with PassContext config "te.keep_schedule_record": a copy of the schedule after each
        # primitive (the first one before any), and the primitives' names
        self.schedule_record: List["Schedule"] = []
        self.primitive_record: List[str] = []
        self.keeps_record = bool(PassContext.current().config.get(KEEP_SCHEDULE_RECORD))
        for op in _post_order(self.outputs):
            st = Stage(op, self)
            self.stages.append(st)
            self.stage_map[op] = st
        for op in self.outputs:
            self.stage_map[op].is_output = True
        setup_scans(self)
        for st in self.stages:
            if isinstance(st.op, TensorComputeOp):
                st.op.schedule_stage(st)
        self.schedule_record.clear()
        self.primitive_record.clear()
        self.record_primitive("vanilla")

    def record_primitive(self, name: str) -> None:
        """Appends a copy of the schedule and `name` to the record, when it keeps one."""
        if self.keeps_record:
            self.schedule_record.append(self.copy())
            self.primitive_record.append(name)

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
        out.schedule_record, out.primitive_record, out.keeps_record = [], [], False
        twin: Dict[Stage, Stage] = {}
        for st in self.stages:
            c = copy.copy(st)
            c.schedule = out
            c.all_iter_vars, c.leaf_iter_vars = list(st.all_iter_vars), list(st.leaf_iter_vars)
            c.relations = list(st.relations)
            c.iter_attrs = {iv: copy.copy(a) for iv, a in st.iter_attrs.items()}
            for a in c.iter_attrs.values():
                a.pragmas = list(a.pragmas)
                a.prefetch_data, a.prefetch_offset = list(a.prefetch_data), list(a.prefetch_offset)
            twin[st] = c
        for c in twin.values():
            if c.attach_stage is not None:
                c.attach_stage = twin[c.attach_stage]
        out.stages = [twin[st] for st in self.stages]
        out.stage_map = {op: twin[st] for op, st in self.stage_map.items()}
        copy_groups(self, out, twin)
        return out

    def normalize(self) -> "Schedule":
        """The normalized schedule, as TVM's: a copy in which every root axis that is still a
        loop (not split, fused or bound to a thread) is replaced by a rebased axis over
        [0, extent), so every loop starts at 0 (a reduce_axis((2, 10)) loop runs over 0..7 and
        its uses read k + 2), and a compute_at axis split or fused since is moved to the loop it
        became (group.py). This schedule is left unchanged. Lowering already builds every loop
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
        legalize_attach_points(out)
        for st in out.stages + out.groups:
            if st.attach_type == "scope" and st.attach_ivar in rebased:
                st.attach_ivar = rebased[st.attach_ivar]
            if getattr(st, "tensorized", None) and st.tensorized[0] in rebased:
                st.tensorized = (rebased[st.tensorized[0]], st.tensorized[1])
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
            if not isinstance(r.op, ComputeOp):
                raise ScheduleError(f"cache_read of '{tensor.name}': reader '{r.name}' is not a "
                                    "te.compute stage; only compute stages can read a cache")
        cache = compute(tensor.shape, lambda *i: tensor[i], name=f"{tensor.name}.{scope}")
        stage = Stage(cache.op, self)
        stage.scope = scope
        stage.group = producer.group
        if stage.group is not None:
            stage.group.num_child_stages += 1
        for r in reader_stages:
            _replace_op(self, r, _rewrite_op(r.op, {tensor: cache}))
        first = min(self.stages.index(r) for r in reader_stages)
        first = max(first, self.stages.index(producer) + 1)
        self.stages.insert(first, stage)
        self.stage_map[cache.op] = stage
        return cache

    def cache_write(self, tensor, scope: str):
        """Compute `tensor` (or a list of all outputs of one te.compute) into a new stage in
        `scope`; the original stage copies it out. After split/fuse/reorder of the stage's data
        axes the cache takes the stage's loop order as its layout, as TVM's; returns the cache
        tensor (a list for a list)."""
        out = cache_write_relayout(self, tensor, scope)
        self.record_primitive("cache_write")
        return out

    def rfactor(self, tensor: Tensor, axis, factor_axis: int = 0):
        """Factor the reduction of `tensor` over the reduce axis `axis` (a leaf, typically
        one part of a split reduce axis) into a new stage (returned) that keeps `axis` as a
        data axis at position `factor_axis`; `tensor`'s stage then reduces over that axis."""
        out = rfactor(self, tensor, axis, factor_axis)
        self.record_primitive("rfactor")
        return out

    def create_group(self, outputs, inputs, include_inputs: bool = False) -> GroupStage:
        """A group stage of the stages between `inputs` and `outputs` (see group.py)."""
        return create_group(self, outputs, inputs, include_inputs)


class _ReplaceLoads(IRMutator):
    def __init__(self, vmap: Dict[Tensor, Tensor]):
        self.vmap = vmap

    def visit_TensorLoad(self, e: TensorLoad):
        e = self.generic_visit(e)
        t = self.vmap.get(e.tensor)
        return e if t is None else TensorLoad(t, e.indices)


def _rewrite_op(op: ComputeOp, vmap: Dict[Tensor, Tensor]) -> ComputeOp:
    body = tuple(_ReplaceLoads(vmap).visit(b) for b in op.body)
    if isinstance(op, TensorComputeOp):
        regions = [TensorRegion(vmap.get(r.tensor, r.tensor), r.ranges) for r in op.regions]
        return TensorComputeOp(op.name, op.tag, op.attrs, op.axis, body, op.intrin, op.outer,
                               op.call_reduce_axis, regions, op.binding)
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


# ---- TVM's schedule functions (`te.schedule.InferBound(s)`, ...) -------------------------------
def InferBound(sch: Schedule) -> Map:
    """The Range of every axis of every computed stage and of every thread axis bound, keyed by
    IterVar (a Map, as TVM's): what lowering allocates and loops over (compiler/te/bound.py)."""
    return make_map(infer_schedule_bounds(sch))


ScheduleOps = schedule_ops
CreateReadGraph = create_read_graph
PostDFSOrder = post_dfs_order
ScanGetBody = scan_get_body
ScanFixPointAnalysis = scan_fix_point_analysis
# Names TVM's te.schedule module also gives (relations, and the tir classes stages hold).
__all__ = ["Schedule", "create_schedule", "InferBound", "ScheduleOps", "CreateReadGraph",
           "PostDFSOrder", "ScanGetBody", "ScanFixPointAnalysis", "AutoInlineElemWise",
           "AutoInlineBroadcast", "AutoInlineInjective",
           "Buffer", "IterVar", "Split", "Fuse", "Rebase", "Singleton"]
AutoInlineElemWise = auto_inline_elemwise
AutoInlineBroadcast = auto_inline_broadcast
AutoInlineInjective = auto_inline_injective
