"""Groups of stages (`Schedule.create_group`), after TVM's.

A group is a stage without an operation of its own: a set of stages that move together. A
member left at the root (`compute_root`, the default) is computed wherever its group is: at
`g.compute_at(s[C], axis)`, every such member runs inside C's loop `axis`, for the region that
loop needs. Members may still be computed at each other's axes (inside the group); a member
cannot be computed at a stage outside its group. Groups nest: a group made of stages that are
already in a group becomes a child of that group.

A scan (`te.scan`) makes the group of its body at schedule creation: the stages between its
state placeholders (and `inputs`) and its updates. That group and the updates are attached to
the scan ("scan_update"), so they run at each step of the scan's time loop.

Lowering works on a copy in which these attachments are resolved (`resolve_attachments`):
every stage then is "root", "inline" or "scope" at a loop of a stage.

An attach axis split or fused after compute_at is moved to the loop it became, as TVM's
normalize (`legalize_attach_points`): to the inner part of a split, to the fused loop when it
was the inner operand of a fuse. (Fused as the outer operand, it is no loop any more: lowering
names the stage and the axis.)
"""
from __future__ import annotations

import copy
from typing import Dict, List, Optional

from ..ir.errors import ScheduleError
from ..tir import expr as E
from .iter_relation import Fuse, Split
from .stage import Stage
from .tensor import Tensor


class GroupStage(Stage):
    """The stage of a group: `compute_at`/`compute_root` move its members; it has no loops."""

    _count = 0

    def __init__(self, schedule, name: Optional[str] = None):
        GroupStage._count += 1
        self._name = name or f"group{GroupStage._count}"
        self.op = None
        self.origin_op = None
        self.schedule = schedule
        self.all_iter_vars: List[E.IterVar] = []
        self.leaf_iter_vars: List[E.IterVar] = []
        self.relations = []
        self.iter_attrs = {}
        self.attach_type = "root"
        self.attach_stage: Optional[Stage] = None
        self.attach_ivar: Optional[E.IterVar] = None
        self.scope = "global"
        self.is_output = False
        self.group: Optional[Stage] = None
        self.num_child_stages = 0

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"group({self._name})"

    @property
    def is_placeholder(self) -> bool:
        return False

    def members(self) -> List[Stage]:
        """The operation stages in this group or in groups nested in it."""
        out = []
        for st in self.schedule.stages:
            g = st.group
            while g is not None and g is not self:
                g = g.group
            if g is self:
                out.append(st)
        return out

    def _no_loops(self, prim: str):
        self._fail(prim, "a group has no loops of its own; schedule its member stages "
                         "(s[tensor]) or move the whole group with compute_at")

    def _check_compute(self, prim: str):
        self._no_loops(prim)

    def _leaf(self, prim: str, iv):
        self._no_loops(prim)

    def set_scope(self, scope: str):
        self._no_loops("set_scope")

    def compute_at(self, parent: Stage, axis):
        """Compute every member left at the group's root inside `parent`'s loop `axis`."""
        if self.attach_type == "scan_update":
            self._fail("compute_at", f"it is the body of scan '{self.attach_stage.name}', "
                                     "computed at each step of the scan's time loop")
        if not isinstance(parent, Stage) or isinstance(parent, GroupStage):
            self._fail("compute_at", "the first argument must be the stage of an operation "
                                     "(s[T])")
        self._check_group("compute_at", parent)
        if not isinstance(axis, E.IterVar) or axis not in parent.leaf_iter_vars:
            name = getattr(axis, "name", repr(axis))
            self._fail("compute_at", f"axis '{name}' is not a leaf axis of stage "
                                     f"'{parent.name}'")
        members = self.members()
        if parent in members:
            self._fail("compute_at", f"stage '{parent.name}' belongs to this group, so the "
                                     "group cannot be computed at its axis")
        sch = self.schedule
        if not any(sch.reads_transitively(parent, m) for m in members):
            self._fail("compute_at", f"stage '{parent.name}' does not consume any stage of "
                                     f"the group, so the group cannot be computed at its axis "
                                     f"'{axis.name}'")
        self.attach_type, self.attach_stage, self.attach_ivar = "scope", parent, axis

    def compute_root(self):
        if self.attach_type == "scan_update":
            self._fail("compute_root", f"it is the body of scan '{self.attach_stage.name}'")
        self.attach_type, self.attach_stage, self.attach_ivar = "root", None, None


def _stages_of(sch, tensors, what: str) -> List[Stage]:
    if tensors is None:
        return []
    tensors = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
    out = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise ScheduleError(f"create_group: {what} must be tensors, got {t!r}")
        out.append(sch[t])
    return out


def _producers(sch, st: Stage) -> List[Stage]:
    if st.is_placeholder:
        return []
    out = []
    for t in st.op.input_tensors:
        p = sch.stage_map.get(t.op)
        if p is not None and p not in out:
            out.append(p)
    return out


def subgraph(sch, outputs: List[Stage], inputs: List[Stage], include_inputs: bool):
    """Stages on a path from `outputs` back to `inputs` (the inputs themselves only with
    include_inputs), producers first."""
    boundary = set(map(id, inputs))
    reach: Dict[int, bool] = {}
    found: List[Stage] = []

    def visit(st: Stage) -> bool:
        if id(st) in reach:
            return reach[id(st)]
        if id(st) in boundary:
            reach[id(st)] = True
            if include_inputs:
                found.append(st)
            return True
        reach[id(st)] = False
        hit = False
        for p in _producers(sch, st):
            hit = visit(p) or hit
        reach[id(st)] = hit
        if hit:
            found.append(st)
        return hit

    for st in outputs:
        visit(st)
    return found


def _common_ancestor(g1: Optional[Stage], g2: Optional[Stage]) -> Optional[Stage]:
    if g1 is None or g2 is None:
        return None
    g = g1
    while g is not None:
        if g is g2:
            return g2
        g = g.group
    g = g2
    while g is not None:
        if g is g1:
            return g1
        g = g.group
    return None


def create_group(sch, outputs, inputs, include_inputs: bool = False) -> GroupStage:
    """A group of the stages between `inputs` and `outputs` (tensors or lists of them): every
    stage that reads, directly or not, one of `inputs` and that `outputs` depend on, the
    outputs' stages included and the inputs' only with include_inputs."""
    out_stages = _stages_of(sch, outputs, "outputs")
    if not out_stages:
        raise ScheduleError("create_group: give at least one output tensor")
    members = subgraph(sch, out_stages, _stages_of(sch, inputs, "inputs"), include_inputs)
    if not members:
        names = ", ".join(f"'{s.name}'" for s in out_stages)
        raise ScheduleError(f"create_group: no stage lies between the inputs and the outputs "
                            f"{names}; the outputs must read (directly or not) an input")
    return group_stages(sch, members)


def group_stages(sch, members: List[Stage], name: Optional[str] = None) -> GroupStage:
    """Make the group of `members` (a non-empty list of stages), nesting it in the innermost
    group that holds them all."""
    parent = members[0].group
    for st in members[1:]:
        parent = _common_ancestor(parent, st.group)
    counts: Dict[int, list] = {}
    for st in members:
        if st.group is not None:
            counts.setdefault(id(st.group), [st.group, 0])[1] += 1
    # a group whose children are all taken counts as one taken child of its own group
    stack = [grp for grp, n in counts.values()
             if grp is not parent and grp.num_child_stages == n]
    while stack:
        grp = stack.pop()
        if grp.group is not None and grp.group is not parent:
            entry = counts.setdefault(id(grp.group), [grp.group, 0])
            entry[1] += 1
            if entry[1] == grp.group.num_child_stages:
                stack.append(grp.group)
    for grp, n in counts.values():
        if grp is not parent and grp.num_child_stages != n:
            raise ScheduleError(f"create_group: the stages overlap group '{grp.name}' without "
                                "containing all of it; a group must contain whole groups")
    g = GroupStage(sch, name)
    g.group = parent
    if parent is not None:
        parent.num_child_stages += 1
    for grp, _ in counts.values():
        if grp is not parent and grp.group is parent:
            _move(grp, parent, g)
    for st in members:
        if st.group is parent:
            _move(st, parent, g)
    for st in members:  # an attachment that leaves the group is dropped (back to its root)
        if st.attach_type == "scope" and _common_ancestor(st.attach_stage.group, g) is not g:
            st.attach_type, st.attach_stage, st.attach_ivar = "root", None, None
    sch.groups.append(g)
    return g


def _move(st: Stage, old: Optional[Stage], new: GroupStage) -> None:
    st.group = new
    new.num_child_stages += 1
    if old is not None:
        old.num_child_stages -= 1


def copy_groups(src, out, twin: Dict[Stage, Stage]) -> None:
    """Give the copied schedule `out` its own group stages (Schedule.copy)."""
    gtwin: Dict[Stage, Stage] = {}
    for g in getattr(src, "groups", []):
        c = copy.copy(g)
        c.schedule = out
        gtwin[g] = c
    out.groups = [gtwin[g] for g in getattr(src, "groups", [])]
    for c in list(twin.values()) + out.groups:
        if c.group is not None:
            c.group = gtwin[c.group]
    for c in out.groups:
        if c.attach_stage is not None:
            c.attach_stage = twin[c.attach_stage]


def attach_spec(st: Stage) -> Stage:
    """The stage whose attachment `st` follows: itself, or for a stage left at the root of its
    group, the group's (recursively), as TVM's GetAttachSpec."""
    spec = st
    while spec.attach_type == "root" and spec.group is not None:
        spec = spec.group
    return spec


def legalize_attach_points(sch) -> None:
    """Move each compute_at (of stages and groups) whose axis was split or fused afterwards to
    the loop that axis became: the inner part of a split, the loop of a fuse whose inner operand
    it was (repeatedly, through later splits and fuses)."""
    for st in list(sch.stages) + list(getattr(sch, "groups", [])):
        if st.attach_type != "scope" or st.attach_ivar in st.attach_stage.leaf_iter_vars:
            continue
        axis, moved = st.attach_ivar, True
        while moved:
            moved = False
            for r in st.attach_stage.relations:
                if isinstance(r, Split) and r.parent is axis:
                    axis, moved = r.inner, True
                elif isinstance(r, Fuse) and r.inner is axis:
                    axis, moved = r.fused, True
        st.attach_ivar = axis


def resolve_attachments(sch):
    """A copy of `sch` in which every stage's attachment is explicit: members at the root of a
    group take the group's attachment, and a scan's update (and body) is computed at the
    scan's time loop. Attach axes split or fused after compute_at are legalized first."""
    out = sch.copy()
    for st in out.stages:
        st.check_attachment()
    legalize_attach_points(out)
    for st in out.stages:
        spec = attach_spec(st)
        kind, parent, axis = spec.attach_type, spec.attach_stage, spec.attach_ivar
        if kind == "scan_update":  # a scan stage's time loop is its first leaf
            kind, axis = "scope", parent.leaf_iter_vars[0]
        st.attach_type, st.attach_stage, st.attach_ivar = kind, parent, axis
    return out
