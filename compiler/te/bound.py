"""Bound inference: the range of every axis of every stage.

Stages are visited consumers first. A stage's root ranges are the union of the regions its
consumers read, where the consumers' loops enclosing the stage's attach point (compute_at) are
fixed to their current value and every other loop ranges fully; an output or argument stage
covers its whole shape. Derived axes (split, fuse) follow from the roots (`pass_down`).

GPU memory scopes (as TVM): a stage's region is shared by the threads that share its storage,
so the loops bound to thread axes of a wider rank than its scope are relaxed, not fixed: a
"shared" stage attached under threadIdx/vthread loops covers what the whole block reads there,
a "global" one what the whole grid reads; "local" stays per thread; "warp" memory is shared by
the threads of threadIdx.x only. A loop bound to a thread axis the scope does not relax stands
for its thread index wherever it is: a consumer's loop bound to the same launch axis as a loop
enclosing the stage reads at that loop's index (thread_scope.py merges the two loops). A stage
left in the default scope and attached under thread-bound loops is stored "local" (under a
threadIdx/vthread loop) or "shared" (under blockIdx loops only): `storage_scope`.

A read region that provably covers the whole tensor is the tensor's shape (as TVM: a read past
the ends does not widen the region beyond the tensor, which a hard index would otherwise do).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

from ..arith import can_prove, covered_ranges, relax, simplify
from ..arith.keys import KeyCache
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import post_order_visit, substitute
from .iter_relation import Fuse, pass_down, pass_up_ranges, pass_up_values
from .stage import Stage
from .tensor import tensor_loads


class Bounds:
    """`dom[iv]` for every axis; `loop_ranges[var]` = inclusive (lo, hi) of each loop var."""

    def __init__(self):
        self.dom: Dict[E.IterVar, E.Range] = {}
        self.loop_ranges: Dict[E.Var, tuple] = {}


# Rank of a storage scope and of a thread tag: a thread-bound loop is relaxed for a stage whose
# scope rank is at most the tag's rank (threads of that level share the storage); warp memory
# is shared by the lanes of threadIdx.x alone.
_SCOPE_RANK = {"global": 0, "shared": 1, "warp": 2, "local": 3}


def thread_rank(tag: str) -> int:
    """0 for blockIdx.*, 1 for threadIdx.* and virtual threads."""
    return 0 if tag.startswith("blockIdx") else 1


def _enclosing(stage: Stage):
    """(loop IterVar, its stage) of every loop enclosing `stage`'s attach point."""
    out = []
    while stage.attach_type == "scope":
        parent, axis = stage.attach_stage, stage.attach_ivar
        leaves = parent.leaf_iter_vars
        out += [(iv, parent) for iv in leaves[:leaves.index(axis) + 1]]
        stage = parent
    return out


def _thread_tag(iv, stage: Stage):
    attr = stage.iter_attrs.get(iv)
    thread = getattr(attr, "thread", None)
    return thread.thread_tag if thread is not None else None


def storage_scope(stage: Stage) -> str:
    """The scope `stage` is stored in: its own, or when left "global" and attached under
    thread-bound loops, "local" (a threadIdx/vthread loop encloses it) or "shared"."""
    if stage.scope != "global":
        return stage.scope
    tags = [t for t in (_thread_tag(iv, st) for iv, st in _enclosing(stage)) if t]
    if not tags:
        return "global"
    return "local" if any(thread_rank(t) == 1 for t in tags) else "shared"


def shared_across(stage: Stage, tag: str) -> bool:
    """Whether the threads of launch axis `tag` share `stage`'s storage (so a loop bound to it
    is relaxed in `stage`'s region)."""
    scope = storage_scope(stage).split(".")[0]
    if scope == "warp" and tag == "threadIdx.x":
        return True
    return _SCOPE_RANK.get(scope, 3) <= thread_rank(tag)


def fixed_vars(stage: Stage) -> List[E.Var]:
    """Loop variables of the loops that enclose `stage`'s attach point, less the thread-bound
    loops its storage scope is shared across."""
    out: List[E.Var] = []
    for iv, st in _enclosing(stage):
        tag = _thread_tag(iv, st)
        if tag is not None and shared_across(stage, tag):
            continue
        out.append(iv.var)
    return out


def _thread_points(stage: Stage, thread_leaves: Dict[E.Var, str]) -> Dict[E.Var, E.Var]:
    """Loop variables bound to a launch axis (threadIdx/blockIdx) that `stage`'s scope does not
    relax, and that a loop enclosing `stage` is bound to as well -> that enclosing loop's
    variable (the outermost one of the tag: nested loops of one tag are merged into it)."""
    outer: Dict[str, E.Var] = {}
    for iv, st in reversed(_enclosing(stage)):
        tag = _thread_tag(iv, st)
        if tag and tag.startswith(("threadIdx", "blockIdx")) and not shared_across(stage, tag):
            outer.setdefault(tag, iv.var)
    return {v: outer[tag] for v, tag in thread_leaves.items() if tag in outer}


def infer_bounds(sch, bodies: Dict[Stage, tuple], full: Set[Stage]) -> Bounds:
    """`bodies`: each computed stage's expressions after inlining; `full`: stages that must
    cover their whole shape (arguments and outputs). Thread axes that leaves are bound to get
    the range of their (widest) loop."""
    b = Bounds()
    computed = [s for s in sch.stages if s in bodies]
    thread_leaves: Dict[E.Var, str] = {}
    for st in computed:
        for iv in st.leaf_iter_vars:
            tag = _thread_tag(iv, st)
            if tag:
                thread_leaves[iv.var] = tag
    for stage in reversed(computed):
        reads = [(c, ld) for c in computed for ld in _loads(c, bodies)
                 if sch.stage_map.get(ld.tensor.op) is stage]
        roots = list(stage.op.axis)
        if stage in full or not reads:
            ranges = [iv.dom for iv in roots]
        else:
            ranges = _needed(stage, roots, reads, b, thread_leaves)
        for iv, r in zip(roots, ranges):
            b.dom[iv] = r
        for iv in stage.op.reduce_axis:
            b.dom[iv] = iv.dom
        bound = {iv for iv in stage.leaf_iter_vars if _thread_tag(iv, stage)}
        pass_down(stage.relations, b.dom, bound)
        for iv in stage.leaf_iter_vars:
            ext = b.dom[iv].extent
            b.loop_ranges[iv.var] = (E.const(0), simplify(ext - 1))
        for iv in bound:
            _bind_thread(b, stage.iter_attrs[iv].thread, b.dom[iv])
    return b


def _loads(stage: Stage, bodies):
    """The reads that size a stage's inputs: those of its body, or what its operation says
    it needs (a TensorComputeOp: the regions it calls its intrinsic on)."""
    needed = getattr(stage.op, "bound_loads", None)
    if needed is not None and getattr(stage.op, "regions", ()):
        return needed()
    return [ld for body in bodies[stage] for ld in tensor_loads(body)]


def _bind_thread(b: Bounds, thread: E.IterVar, r: E.Range) -> None:
    old = b.dom.get(thread)
    if old is None or can_prove(old.extent < r.extent):
        b.dom[thread] = r


def _needed(stage: Stage, roots, reads, b: Bounds, thread_leaves) -> List[E.Range]:
    fixed = fixed_vars(stage)
    fixed_ids = {id(v) for v in fixed}
    points = _thread_points(stage, thread_leaves)
    points = {v: p for v, p in points.items() if id(v) not in fixed_ids}
    relaxable = {v: r for v, r in b.loop_ranges.items()
                 if id(v) not in fixed_ids and v not in points}
    # a relaxed loop of one iteration is its value: `(t + b) % n` over t in [0, 0] is one
    # element, which relaxing the remainder over its operands' ranges would widen to all n
    single = {v: lo for v, (lo, hi) in relaxable.items()
              if E.is_const_int(lo, 0) and E.is_const_int(hi, 0)}
    points = {**points, **single}
    lo: List[Optional[E.PrimExpr]] = [None] * len(roots)
    hi: List[Optional[E.PrimExpr]] = [None] * len(roots)
    unknown = [False] * len(roots)
    root_ranges_cache, exact_cache = {}, {}
    keys, seen = KeyCache(), set()
    for consumer, load in reads:
        # a load repeated in a body (the same indices) needs the same region: once is enough
        k = (id(consumer), tuple(keys.key(i) for i in load.indices))
        if k in seen:
            continue
        seen.add(k)
        if consumer not in root_ranges_cache:
            root_ranges_cache[consumer] = _consumer_root_ranges(consumer, fixed_ids, points, b)
        var_ranges = root_ranges_cache[consumer]
        regions = covered_ranges(load.indices, var_ranges)
        if any(isinstance(r, Fuse) for r in consumer.relations) or _divides(load.indices):
            if consumer not in exact_cache:
                exact_cache[consumer] = _consumer_leaf_values(consumer, fixed_ids, points, b)
            regions = _tighter(regions, load.indices, *exact_cache[consumer])
        for d, reg in enumerate(regions):
            if reg is None:
                unknown[d] = True
                continue
            first = relax(substitute(reg.min, points), relaxable)
            last = relax(substitute(simplify(reg.min + reg.extent - 1), points), relaxable)
            if first is None or last is None:
                unknown[d] = True
                continue
            first, last = _within_shape(first[0], last[1], roots[d].dom)
            lo[d] = first if lo[d] is None else _pick(E.Min, lo[d], first)
            hi[d] = last if hi[d] is None else _pick(E.Max, hi[d], last)
    out = []
    for d, iv in enumerate(roots):
        if unknown[d] or lo[d] is None:
            out.append(iv.dom)
        else:
            out.append(E.Range(lo[d], simplify(hi[d] - lo[d] + 1)))
    return out


def _within_shape(first, last, dom: E.Range):
    """The read region [first, last], or the tensor's whole dimension when the region provably
    covers it (TVM's rule: both ends are replaced together, or neither)."""
    end = simplify(dom.min + dom.extent - 1)
    if can_prove(first <= dom.min) and can_prove(end <= last):
        return dom.min, end
    return first, last


def _pick(op, a, b):
    if can_prove(a <= b):
        return a if op is E.Min else b
    if can_prove(b <= a):
        return b if op is E.Min else a
    return simplify(op(a, b))


def _consumer_leaf_values(consumer: Stage, fixed_ids, points, b: Bounds):
    """(root variable -> its value in the consumer's leaf loop variables, ranges of the leaf
    variables that vary): the consumer's indices written in its loops rather than its roots.
    A fused loop split into parts makes its roots' ranges loose (a run of rows that starts
    inside one row covers whole rows), while the index the roots rebuild,
    `(f // n) * n + f % n`, folds back to the loop's own `f`."""
    values, ranges, known = {}, {}, {}
    for iv in consumer.leaf_iter_vars:
        if iv.var in b.loop_ranges and iv.var not in points:
            known[iv.var] = b.loop_ranges[iv.var]
        if id(iv.var) in fixed_ids:
            values[iv] = iv.var
        elif iv.var in points:
            values[iv] = points[iv.var]
        else:
            values[iv] = iv.var
            ranges[iv.var] = E.Range(E.const(0, iv.var.dtype), b.dom[iv].extent)
    pass_up_values(consumer.relations, b.dom, values)
    rootval = {iv.var: simplify(b.dom[iv].min + values[iv])
               for iv in list(consumer.op.axis) + list(consumer.op.reduce_axis)}
    return rootval, ranges, known


def _divides(indices) -> bool:
    """Whether an index divides or takes a remainder (its region may be tighter in the
    consumer's loop variables, whose ranges fold the division)."""
    found = []
    for i in indices:
        post_order_visit(i, lambda e: found.append(e)
                         if isinstance(e, (E.FloorDiv, E.FloorMod)) else None)
        if found:
            return True
    return False


def _tighter(regions, indices, rootval, ranges, known):
    """`regions`, each replaced by the region of the same index written in the consumer's
    leaf loops where that one has a constant extent and the other does not, or a smaller.
    The index is simplified knowing the range of every leaf loop of the consumer (the fixed
    outer ones too): `(n.outer * 128 + i) % 128` is `i` there."""
    exact = covered_ranges([simplify(substitute(i, rootval), known) for i in indices], ranges)
    out = []
    for old, new in zip(regions, exact):
        if new is not None and isinstance(new.extent, E.IntImm) and (
                old is None or not isinstance(old.extent, E.IntImm)
                or new.extent.value < old.extent.value):
            old = new
        out.append(old)
    return out


def _consumer_root_ranges(consumer: Stage, fixed_ids, points, b: Bounds) -> Dict[E.Var, E.Range]:
    """Ranges of the consumer's root axis variables (what its body's indices are written in)."""
    leaf = {}
    for iv in consumer.leaf_iter_vars:
        if id(iv.var) in fixed_ids:
            leaf[iv] = E.Range(iv.var, E.const(1))
        elif iv.var in points:
            leaf[iv] = E.Range(points[iv.var], E.const(1))
        else:
            leaf[iv] = E.Range(E.const(0), b.dom[iv].extent)
    rng = pass_up_ranges(consumer.relations, b.dom, leaf)
    out = {}
    for iv in list(consumer.op.axis) + list(consumer.op.reduce_axis):
        r = rng.get(iv)
        if r is None:
            raise ScheduleError(f"stage '{consumer.name}': axis '{iv.name}' has no loop")
        out[iv.var] = E.Range(simplify(b.dom[iv].min + r.min), r.extent)
    return out
