"""The loop nest of one stage: loops from its leaf axes (outermost first), root values from the
split/fuse relations, bound guards, the stores, and for reductions an init nest followed by the
update nest. An extern stage is its statement with the placeholder buffers bound
(`make_extern_stmt`).

Reductions: the init goes right before the outermost loop that comes from a reduction axis;
the loops inside that point that derive from a data-parallel axis (a reduction axis fused with
a data axis among them) are repeated (with fresh variables) around the init.
Guards: a root axis whose value may leave its declared domain (non-divisible split, a
compute_at region larger than the tensor) gets an `if value < extent` around the store, and so
does an intermediate axis (one split again) whose value may pass its extent.
"""
from __future__ import annotations

from typing import Callable, Dict, List

from ..arith import can_prove, relax, simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer
from ..tir.functor import IRMutator, substitute
from ..tir.stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    seq,
)
from ..tir.transform.inject_prefetch import PREFETCH_SCOPE
from ..tir.transform.thread_sync import barrier
from .bound import Bounds
from .inline import to_buffer_loads
from .iter_relation import derived_from, pass_up_values
from .stage import Stage


def _guards(stage: Stage, rootval: Dict[E.Var, E.PrimExpr], values: Dict[E.IterVar, E.PrimExpr],
            bounds: Bounds):
    data, red = [], []
    roots = list(stage.op.axis) + list(stage.op.reduce_axis)
    for iv in roots:
        v, dom = rootval[iv.var], iv.dom
        r = relax(v, bounds.loop_ranges)
        conds = []
        if r is None or not _le(dom.min, r[0]):
            conds.append(v >= dom.min)
        if r is None or not _le(r[1], simplify(dom.min + dom.extent - 1)):
            conds.append(v < simplify(dom.min + dom.extent))
        (red if iv.kind == E.IterKind.REDUCE else data).extend(conds)
    # An intermediate axis (split again, or fused and split) can overshoot its own extent
    # while its root stays in range: the iteration would belong to another value of the outer
    # loops (computed twice, or outside a compute_at region), so it is guarded too. So is a
    # split root axis whose compute_at region is smaller than its declared domain: in the
    # domain, but past the region (and its allocation).
    leaves = set(stage.leaf_iter_vars)
    for iv in stage.all_iter_vars:
        if iv in leaves or iv not in values:
            continue
        if iv in roots and _same_range(bounds.dom[iv], iv.dom):
            continue
        v, extent = values[iv], bounds.dom[iv].extent
        r = relax(v, bounds.loop_ranges)
        if r is None or not _le(r[1], simplify(extent - 1)):
            (red if iv.kind == E.IterKind.REDUCE else data).append(v < extent)
    return data, red


def _same_range(a: E.Range, b: E.Range) -> bool:
    return _le(a.min, b.min) and _le(b.min, a.min) and _le(a.extent, b.extent) \
        and _le(b.extent, a.extent)


def _le(a, b) -> bool:

    return can_prove(a <= b)


def _guard(body: Stmt, conds: List[E.PrimExpr]) -> Stmt:
    conds = [c for c in (simplify(c) for c in conds) if not E.is_const_int(c, 1)]
    if not conds:
        return body
    cond = conds[0]
    for c in conds[1:]:
        cond = E.logical_and(cond, c)
    return IfThenElse(cond, body)


def make_stage_stmt(stage: Stage, exprs: tuple, bounds: Bounds, resolve: Callable,
                    attach: Callable[[Stage, E.IterVar, Stmt], Stmt]) -> Stmt:
    """`resolve(tensor) -> (buffer, offsets)` for any tensor read or written; `attach(stage,
    leaf, body)` wraps a loop body with the stages computed at that loop."""
    dom = bounds.dom
    leaves = stage.leaf_iter_vars
    values = {iv: iv.var for iv in leaves}
    pass_up_values(stage.relations, dom, values)
    roots = list(stage.op.axis) + list(stage.op.reduce_axis)
    rootval = {iv.var: simplify(dom[iv].min + values[iv]) for iv in roots}
    data_guards, red_guards = _guards(stage, rootval, values, bounds)


    exprs = [to_buffer_loads(substitute(e, rootval), resolve) for e in exprs]
    targets = []
    for t in stage.op.outputs:
        buf, offsets = resolve(t)
        idx = tuple(simplify(rootval[ax.var] - o) for ax, o in zip(stage.op.axis, offsets))
        targets.append((buf, idx))

    def loops(ivs, body, with_attach=True):
        for iv in reversed(ivs):
            if with_attach:
                body = attach(stage, iv, body)
            body = _make_for(stage, iv, dom[iv].extent, body, resolve)
        return body

    if not stage.op.reduce_axis:
        stores = seq(*[BufferStore(b, e, i) for (b, i), e in zip(targets, exprs)])
        return loops(leaves, _guard(stores, data_guards))

    red = exprs[0]
    comb = red.combiner
    init_vals = red.init or comb.identity
    init = seq(*[BufferStore(b, v, i) for (b, i), v in zip(targets, init_vals)])
    olds = [E.BufferLoad(b, i) for b, i in targets]
    vmap = {**dict(zip(comb.lhs, olds)), **dict(zip(comb.rhs, red.source))}
    news = [substitute(r, vmap) for r in comb.result]
    if len(news) == 1:
        update = BufferStore(targets[0][0], news[0], targets[0][1])
    else:
        temps = [E.Var(f"{stage.name}.v{k}", n.dtype) for k, n in enumerate(news)]
        update = seq(*[BufferStore(b, t, i) for (b, i), t in zip(targets, temps)])
        for t, n in reversed(list(zip(temps, news))):
            update = LetStmt(t, n, update)
    cond = [] if E.is_const_int(red.condition, 1) else [red.condition]
    update = _guard(update, data_guards + red_guards + cond)

    p = next(k for k, iv in enumerate(leaves) if iv.kind == E.IterKind.REDUCE)
    if any(_thread_tag(stage, iv).startswith("threadIdx") for iv in leaves[p:]
           if iv.kind == E.IterKind.REDUCE):
        return _cross_thread(stage, leaves, p, targets, red, bounds, data_guards,
                             red_guards + cond, loops, attach)
    # the init repeats every inner loop a data axis feeds, a reduction axis fused with a data
    # axis included (the data part of its value indexes the store)
    from_data = derived_from(stage.relations, stage.op.axis)
    init_ivs = [iv for iv in leaves[p:] if iv.kind != E.IterKind.REDUCE or iv in from_data]
    fresh = {iv.var: E.Var(iv.var.name + ".init", iv.var.dtype) for iv in init_ivs}
    init_nest = substitute(loops(init_ivs, _guard(init, data_guards), with_attach=False), fresh)
    inner = seq(init_nest, loops(leaves[p:], update))
    return loops(leaves[:p], inner)


def _make_for(stage: Stage, iv: E.IterVar, extent: E.PrimExpr, body: Stmt,
              resolve: Callable = None) -> Stmt:
    """The loop of leaf axis `iv` around `body`, inside its pragmas (`AttrStmt(iv,
    "pragma_<key>", value)`), inside its prefetches (`AttrStmt(<the tensor's data var>,
    "prefetch_scope", offset)`, for `inject_prefetch`; tensors found with `resolve`)."""
    attr = stage.iter_attrs.get(iv)
    kind = attr.kind if attr else ForKind.SERIAL
    thread = attr.thread if attr else None
    if kind == ForKind.VECTORIZED and not isinstance(extent, E.IntImm):
        raise ScheduleError(f"vectorize on stage '{stage.name}': axis '{iv.name}' has the "
                            f"non-constant extent {extent}; split it by a constant factor and "
                            "vectorize the inner axis")
    loop: Stmt = For(iv.var, E.const(0, iv.var.dtype.element_of().__str__()), extent, kind,
                     body, thread)
    for key, value in reversed(attr.pragmas if attr else []):
        loop = AttrStmt(iv, f"pragma_{key}", value, loop)
    for tensor, offset in zip(attr.prefetch_data, attr.prefetch_offset) if attr and resolve \
            else ():
        loop = AttrStmt(resolve(tensor)[0].data, PREFETCH_SCOPE, offset, loop)
    return loop


class _BindBuffers(IRMutator):
    """Placeholder buffers (and their data vars) → the buffers lowering chose."""

    def __init__(self, bmap: Dict[Buffer, Buffer]):
        self.bmap = bmap
        self.vmap = {b.data: nb.data for b, nb in bmap.items()}
        # a placeholder's own element offset is that of the buffer bound to it
        self.vmap.update({b.elem_offset: nb.elem_offset for b, nb in bmap.items()
                          if isinstance(b.elem_offset, E.Var)})

    def visit_buffer(self, b: Buffer) -> Buffer:
        return self.bmap.get(b, b)

    def visit_Var(self, v: E.Var) -> E.PrimExpr:
        return self.vmap.get(v, v)


def make_extern_stmt(stage: Stage, resolve: Callable) -> Stmt:
    """The statement of an extern stage, its placeholders bound to the storage of its tensors
    (whole tensors, so the storage has the placeholders' shapes)."""
    op = stage.op
    bmap: Dict[Buffer, Buffer] = {}
    for placeholder, t in list(zip(op.input_placeholders, op.inputs)) + \
            list(zip(op.output_placeholders, op.outputs)):
        buf, offsets = resolve(t)
        if not all(E.is_const_int(o, 0) for o in offsets):
            raise ScheduleError(f"extern stage '{stage.name}': tensor '{t.name}' is stored as a "
                                "region, not whole; compute it at the root")
        bmap[placeholder] = buf
    return _BindBuffers(bmap).visit(op.body)


# ---- reductions across the threads of a block (TVM's tvm_thread_allreduce) --------------------
def _thread_tag(stage: Stage, iv: E.IterVar) -> str:
    attr = stage.iter_attrs.get(iv)
    thread = attr.thread if attr else None
    return thread.thread_tag if thread is not None else ""


def _cross_thread(stage, leaves, p, targets, red, bounds, data_guards, red_guards, loops,
                  attach) -> Stmt:
    """A reduction whose outermost reduction loop is bound to threadIdx: each thread reduces
    its share into a local value, the block combines the values in shared memory by a tree
    (halving strides, a barrier after each step), and thread 0 stores the result."""
    tx = leaves[p]
    where = f"stage '{stage.name}': the reduction axis '{tx.name}' is bound to a thread axis"
    if not _thread_tag(stage, tx).startswith("threadIdx"):
        raise ScheduleError(f"{where}, but not its outermost one; bind the outermost "
                            "reduction axis (split the reduction, rfactor, bind the new axis)")
    if any(iv.kind != E.IterKind.REDUCE for iv in leaves[p:]):
        raise ScheduleError(f"{where}; data axes inside it are not supported: reorder them "
                            "outside the reduction axes")
    if len(targets) != 1 or len(red.combiner.result) != 1:
        raise ScheduleError(f"{where}; cross-thread reductions take one output")
    lanes = bounds.dom[tx].extent
    if not isinstance(lanes, E.IntImm):
        raise ScheduleError(f"{where}, but its extent {lanes} is not a constant")
    n = lanes.value
    group, groups = E.const(0), 1
    for iv in leaves[:p]:
        tag = _thread_tag(stage, iv)
        if tag.startswith("threadIdx"):
            ext = bounds.dom[iv].extent
            if not isinstance(ext, E.IntImm):
                raise ScheduleError(f"{where}; the thread axis '{iv.name}' needs a constant "
                                    "extent")
            group, groups = group * ext.value + iv.var, groups * ext.value
    (target, index), = targets
    dtype = target.dtype
    local = decl_buffer((1,), dtype, f"{stage.name}.red_local", scope="local")
    shared = decl_buffer((groups * n,), dtype, f"{stage.name}.red_buf", scope="shared")
    comb = red.combiner
    identity = (red.init or comb.identity)[0]

    def combine(a, b):
        return substitute(comb.result[0], {comb.lhs[0]: a, comb.rhs[0]: b})

    zero = (E.const(0),)
    value = combine(E.BufferLoad(local, zero), red.source[0])
    update = _guard(BufferStore(local, value, zero), data_guards + red_guards)
    inner = loops(leaves[p + 1:], update)
    lane = tx.var
    base = simplify(group * n)
    slot = (simplify(base + lane),)
    steps = [BufferStore(local, identity, zero), inner,
             BufferStore(shared, E.BufferLoad(local, zero), slot), barrier()]
    stride = 1
    while stride < n:
        stride *= 2
    stride //= 2
    while stride >= 1:
        other = (simplify(base + lane + stride),)
        cond = [lane < stride] + ([lane + stride < n] if n % (2 * stride) else [])
        steps.append(_guard(BufferStore(shared, combine(E.BufferLoad(shared, slot),
                                                        E.BufferLoad(shared, other)), slot),
                            cond))
        steps.append(barrier())
        stride //= 2
    result = E.BufferLoad(shared, (base,))
    steps.append(_guard(BufferStore(target, result, index), [E.EQ(lane, E.const(0))] + data_guards))
    body = attach(stage, tx, seq(*steps))
    body = _make_for(stage, tx, lanes, body)
    return loops(leaves[:p], Allocate(shared, Allocate(local, body)))
