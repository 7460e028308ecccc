"""`te.scan`: a recurrence over the first dimension, after TVM's ScanOp.

    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state, inputs=[X])      # cumulative sum over rows

The scan's output i has the shape of `state_placeholder[i]`. Rows [0, init.shape[0]) are
`init[i]`; then for t = init.shape[0] .. m-1 (the scan's time loop, `scan_op.scan_axis`), row t
is `update[i]` at t, which may read rows before t of any state. Init, update and state are one
buffer: the scan's output.

Scheduling (as TVM): the scan's own loops are fixed. Its init stages are computed before the
time loop; its update stages, and the group of the stages between the states (and `inputs`)
and the updates (its body, `s[update].group`), are computed at each step of the time loop, for
one row. Those stages are scheduled as usual (split, compute_at within the body, cache_read,
...); another stage can be computed at the time loop with
`s[T].compute_at(s[scan], scan.op.scan_axis)`, e.g. a cache of the state or of an input for
one step.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..arith import simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer
from ..tir.stmt import For, ForKind, Stmt, no_op
from .group import group_stages, subgraph
from .tag import scoped_tag
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor, TensorLoad, op_attrs, tensor_loads


class ScanOp(Operation):
    """A scan: outputs[i] = init[i] then update[i] over `scan_axis`. `axis` holds the axes a
    Stage sees (the scan axis, then one opaque axis per further dimension of each output,
    `spatial_axis_`); a scan stage loops over the scan axis only."""

    def __init__(self, name: str, tag: str, attrs: Optional[Dict[str, Any]], scan_axis,
                 init, update, state_placeholder, inputs):
        self.name, self.tag, self.attrs = name, tag, op_attrs(attrs)
        self.scan_axis = scan_axis
        self.init, self.update = list(init), list(update)
        self.state_placeholder, self.inputs = list(state_placeholder), list(inputs)
        spatial = []
        for i, u in enumerate(self.update):
            for k in range(1, u.ndim):
                ext = u.shape[k]
                spatial.append(E.IterVar(E.Range(E.make_const(ext.dtype, 0), ext),
                                         E.Var(f"{name}.out{i}.i{k}", ext.dtype),
                                         E.IterKind.OPAQUE))
        self.spatial_axis_ = tuple(spatial)
        self.axis = (scan_axis,) + self.spatial_axis_
        self.reduce_axis = ()
        names = [name] if len(self.update) == 1 else \
            [f"{name}.v{i}" for i in range(len(self.update))]
        self.outputs = [Tensor(self, i, s.shape, s.dtype, names[i])
                        for i, s in enumerate(self.state_placeholder)]

    @property
    def input_tensors(self) -> List[Tensor]:
        found: List[Tensor] = []
        for t in self.init + self.update:
            if t not in found:
                found.append(t)
        return found

    def spatial_of(self, i: int):
        """The spatial axes of output i."""
        start = sum(u.ndim - 1 for u in self.update[:i])
        return self.spatial_axis_[start:start + self.update[i].ndim - 1]

    def scan_reads(self) -> tuple:
        """What one step of the time loop reads: row `scan_axis` of every update (bound
        inference derives the updates' regions from these)."""
        return tuple(TensorLoad(u, (self.scan_axis.var,) + tuple(iv.var for iv in
                                                                  self.spatial_of(i)))
                     for i, u in enumerate(self.update))

    def refuses(self, prim: str) -> Optional[str]:
        if prim == "compute_root":
            return None
        return ("a scan's time loop is fixed; schedule its init and update stages (s[init], "
                "s[update]) instead, or compute other stages at scan.op.scan_axis")


def _as_list(x, what: str, name: str) -> List[Tensor]:
    items = list(x) if isinstance(x, (list, tuple)) else [x]
    for t in items:
        if not isinstance(t, Tensor):
            raise ScheduleError(f"scan {name}: {what} must be tensors, got {t!r}")
    return items


def _same(a, b) -> bool:
    return E.is_const_int(simplify(E.convert(a) - E.convert(b)), 0)


def _check_state(name: str, i: int, init: Tensor, update: Tensor, state: Tensor, t0) -> None:
    where = f"scan {name}, state {i} ('{state.name}')"
    if not isinstance(state.op, PlaceholderOp):
        raise ScheduleError(f"{where}: the state must be a te.placeholder, got the output of "
                            f"'{state.op.name}'")
    for what, t in (("init", init), ("update", update)):
        if not isinstance(t.op, ComputeOp):
            raise ScheduleError(f"{where}: {what} '{t.name}' must be a te.compute")
        if t.dtype != state.dtype:
            raise ScheduleError(f"{where}: {what} '{t.name}' is {t.dtype} but the state is "
                                f"{state.dtype}; give them one dtype")
        if t.ndim != state.ndim:
            raise ScheduleError(f"{where}: {what} '{t.name}' has {t.ndim} dimensions but the "
                                f"state has {state.ndim}")
    shape = [str(s) for s in state.shape]
    for k in range(state.ndim):
        if not _same(update.shape[k], state.shape[k]):
            raise ScheduleError(f"{where}: update '{update.name}' has shape "
                                f"{[str(s) for s in update.shape]} but the state has {shape}; "
                                "the update has the state's shape")
        if k and not _same(init.shape[k], state.shape[k]):
            raise ScheduleError(f"{where}: init '{init.name}' has shape "
                                f"{[str(s) for s in init.shape]} but the state has {shape}; "
                                "after the first dimension (the steps it initialises) the init "
                                "has the state's shape")
    if not _same(init.shape[0], t0):
        raise ScheduleError(f"{where}: init '{init.name}' initialises {init.shape[0]} steps but "
                            f"the first init initialises {t0}; every init covers the same steps")


def scan(init, update, state_placeholder, inputs=None, name: str = "scan", tag: str = "",
         attrs: Optional[Dict[str, Any]] = None):
    """The scan of `update` from `init` over the first dimension (see the module docstring).
    Each argument is a tensor or a list (one per state). Returns a tensor, or a list for
    several states."""
    tag = scoped_tag(tag, f"scan {name}")
    init = _as_list(init, "init", name)
    update = _as_list(update, "update", name)
    state = _as_list(state_placeholder, "state_placeholder", name)
    inputs = [] if inputs is None else _as_list(inputs, "inputs", name)
    if not (len(init) == len(update) == len(state)) or not init:
        raise ScheduleError(f"scan {name}: init, update and state_placeholder need one tensor "
                            f"per state, got {len(init)}, {len(update)} and {len(state)}")
    t0, t1 = init[0].shape[0], update[0].shape[0]
    steps = simplify(E.convert(t1) - E.convert(t0))
    if isinstance(steps, E.IntImm) and steps.value <= 0:
        raise ScheduleError(f"scan {name}: init covers {t0} steps of {t1}: nothing is left to "
                            "update; give the update more steps than the init")
    for i, (a, b, c) in enumerate(zip(init, update, state)):
        _check_state(name, i, a, b, c, t0)
    axis = E.IterVar(E.Range(E.convert(t0), steps), E.Var(f"{name}.idx", E.convert(t0).dtype),
                     E.IterKind.ORDERED)
    op = ScanOp(name, tag, attrs, axis, init, update, state, inputs)
    return op.outputs[0] if len(op.outputs) == 1 else list(op.outputs)


# ---- schedule creation -----------------------------------------------------------------------
def setup_scans(sch) -> None:
    """At schedule creation, as TVM: each scan's body becomes a group, and it and the updates
    are computed at the scan's time loop ("scan_update")."""
    for st in list(sch.stages):
        op = st.op
        if not isinstance(op, ScanOp):
            continue
        updates = [sch[u] for u in op.update]
        bounds = [sch[t] for t in op.state_placeholder + op.inputs]
        members = subgraph(sch, updates, bounds, False)
        if members:
            g = group_stages(sch, members, f"{op.name}.body")
            g.attach_type, g.attach_stage, g.attach_ivar = "scan_update", st, op.scan_axis
        for u in updates:
            u.attach_type, u.attach_stage, u.attach_ivar = "scan_update", st, op.scan_axis


def scan_loop_axis(st):
    """The leaf axis of a scan stage that is its time loop."""
    return st.leaf_iter_vars[0]


# ---- lowering (compiler/te/schedule_ops.py) --------------------------------------------------
def scan_full_stages(sch) -> set:
    """Stages computed whole: each scan and its init stages."""
    out = set()
    for st in sch.stages:
        if isinstance(st.op, ScanOp):
            out.add(st)
            out.update(sch.stage_map[t.op] for t in st.op.init)
    return out


def _inside(st, scan_stage) -> bool:
    while st is not scan_stage:
        if st.attach_type != "scope":
            return False
        st = st.attach_stage
    return True


def check_scans(sch, bodies) -> None:
    """Where a (resolved) schedule computes a scan's parts: the scan and its init at the root,
    what reads a state inside the time loop."""
    for st in sch.stages:
        op = st.op
        if not isinstance(op, ScanOp):
            continue
        if st.attach_type != "root":
            raise ScheduleError(f"scan '{st.name}' must be computed at the root (its group was "
                                "moved with compute_at); leave it out of the group")
        loop = scan_loop_axis(st)
        for t in op.init:
            ist = sch.stage_map[t.op]
            if ist.attach_type != "root":
                how = "inlined" if ist.attach_type == "inline" else \
                    f"computed at stage '{ist.attach_stage.name}'"
                raise ScheduleError(f"stage '{ist.name}' is the init of scan '{st.name}', which "
                                    f"is computed before the scan's time loop, but it is {how}; "
                                    "compute_root it")
        for other in sch.stages:
            if other.attach_type == "scope" and other.attach_stage is st \
                    and other.attach_ivar is not loop:
                raise ScheduleError(f"compute_at on stage '{other.name}': axis "
                                    f"'{other.attach_ivar.name}' of scan '{st.name}' is not a "
                                    "loop; compute it at the scan's scan_axis")
        states = {id(t.op) for t in op.state_placeholder}
        for c, exprs in bodies.items():
            if c.attach_type == "inline" or _inside(c, st):
                continue
            read = [ld.tensor for e in exprs for ld in tensor_loads(e)
                    if id(ld.tensor.op) in states]
            if read:
                raise ScheduleError(f"stage '{c.name}' reads the state '{read[0].name}' of scan "
                                    f"'{st.name}' outside the scan's time loop; compute it at "
                                    f"the time loop: s[{c.name}].compute_at(s[{st.name}], "
                                    f"{st.name}.op.scan_axis)")


def allocate_scan(lowering, st) -> List[Buffer]:
    """The scan's output buffers (unless arguments), which its init, update and state tensors
    share."""
    op, bufs = st.op, []
    for i, t in enumerate(op.outputs):
        key = (id(st), t.value_index)
        if key not in lowering.storage:
            buf = decl_buffer(t.shape, t.dtype, t.name, scope=st.scope)
            lowering.storage[key] = (buf, (E.const(0),) * t.ndim)
            bufs.append(buf)
        for alias in (op.init[i], op.update[i], op.state_placeholder[i]):
            other = lowering.sch.stage_map[alias.op]
            lowering.storage[(id(other), alias.value_index)] = lowering.storage[key]
    return bufs


def make_scan_stmt(st, bounds, attach) -> Stmt:
    """The time loop; the stages computed at it (updates, the body) run in it."""
    leaf = scan_loop_axis(st)
    body = attach(st, leaf, no_op())
    return For(leaf.var, E.make_const(leaf.var.dtype, 0), bounds.dom[leaf].extent,
               ForKind.SERIAL, body)
