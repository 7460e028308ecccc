"""A Stage: how one operation's loops are laid out (split, fuse, reorder, tile, annotate,
bind, attach). Every mistake raises ScheduleError naming the stage and the axis.

Vectorize: allowed on any leaf axis here; lowering raises ScheduleError if that loop's extent
is not a constant after bound inference (split by a constant factor first), as TVM does.
Bind: the loop becomes `For(kind=THREAD_BINDING, thread_binding=<the thread IterVar>)`.
Attachment (`attach_type`): "root" (the root of its group, if any: see group.py), "inline",
"scope" (compute_at), or "scan_update" (a scan's update, computed at each step of its time loop;
see scan.py).
"""
from __future__ import annotations

from typing import Dict, List, Optional

from microruntime.object import OpaqueValue

from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.stmt import ForKind
from .iter_relation import Fuse, Relation, Singleton, Split
from .tensor import ExternOp, PlaceholderOp, Tensor
from .tensor_compute import TensorComputeOp

# The thread tags a loop can be bound to: launch dimensions, then virtual threads (serial loops
# in the kernel whose cache stages are shared across them).
THREAD_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
               "threadIdx.z", "vthread", "vthread.x", "vthread.y", "vthread.z", "cthread")


class IterAttr:
    """Annotations of one leaf axis; `iter_type`, `pragma_keys` and `pragma_values` read them
    as TVM's IterVarAttr does."""

    def __init__(self):
        self.kind: str = ForKind.SERIAL
        self.thread: Optional[E.IterVar] = None
        self.pragmas: List[tuple] = []
        self.prefetch_data: List = []     # tensors prefetched ahead along this axis ...
        self.prefetch_offset: List = []   # ... by these many iterations (Stage.prefetch)
        self.tensorized = False
        self.tensor_intrin = None

    @property
    def iter_type(self) -> Optional[int]:
        """IterVar.Unrolled, Vectorized, Parallelized or Tensorized; None for a plain loop."""
        if self.tensorized:
            return E.IterVar.Tensorized
        return _ANNOTATION_TYPES.get(self.kind)

    @property
    def pragma_keys(self) -> tuple:
        return tuple(E.StringImm(key) for key, _ in self.pragmas)

    @property
    def pragma_values(self) -> tuple:
        return tuple(value for _, value in self.pragmas)


_ANNOTATION_TYPES = {ForKind.UNROLLED: E.IterVar.Unrolled, ForKind.VECTORIZED: E.IterVar.Vectorized,
                     ForKind.PARALLEL: E.IterVar.Parallelized}


def _recorded(primitive):
    """Records the schedule after `primitive` when it keeps a record (Schedule.schedule_record,
    PassContext config "te.keep_schedule_record")."""
    def wrapped(self, *args, **kwargs):
        out = primitive(self, *args, **kwargs)
        record = getattr(self.schedule, "record_primitive", None)
        if record is not None:
            record(primitive.__name__)
        return out

    wrapped.__name__, wrapped.__doc__ = primitive.__name__, primitive.__doc__
    return wrapped


class AttachType(str):
    """An attachment kind ("root", "inline", "scope", "scan_update"), which also compares
    equal to TVM's AttachType code (kGroupRoot 1, kInline 2, kInlinedAlready 3, kScope 4,
    kScanUpdate 5), as `s[T].attach_type == 2` reads in classic code."""

    CODES = {"root": 1, "inline": 2, "inlined_already": 3, "scope": 4, "scan_update": 5}

    def __eq__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return self.CODES.get(str(self)) == other
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


class Stage(OpaqueValue):
    @property
    def attach_type(self) -> AttachType:
        return self._attach_type

    @attach_type.setter
    def attach_type(self, kind: str) -> None:
        if kind not in AttachType.CODES:
            raise ScheduleError(f"unknown attachment kind {kind!r}")
        self._attach_type = AttachType(kind)

    def __init__(self, op, schedule):
        self.op = op
        self.origin_op = op
        self.schedule = schedule
        self.all_iter_vars: List[E.IterVar] = list(getattr(op, "axis", ())) + \
            list(getattr(op, "reduce_axis", ()))
        self.leaf_iter_vars: List[E.IterVar] = list(self.all_iter_vars)
        self.relations: List[Relation] = []
        self.iter_attrs: Dict[E.IterVar, IterAttr] = {}
        self.attach_type = "root"  # "root", "inline", "scope"
        self.attach_stage: Optional["Stage"] = None
        self.attach_ivar: Optional[E.IterVar] = None
        self.scope = "global"
        self.is_output = False
        # storage_align: ((root axis index, factor, offset), ...); double_buffer; the
        # tensorized leaf axis and its TensorIntrin (compiler/te/tensorize.py). Tuples and
        # scalars, so Schedule.copy's shallow copy of a stage keeps them apart.
        self.dim_align: tuple = ()
        self.double_buffered = False
        self.tensorized: Optional[tuple] = None
        self.group: Optional["Stage"] = None  # the group stage it belongs to (create_group)

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def is_placeholder(self) -> bool:
        return isinstance(self.op, PlaceholderOp)

    def __repr__(self) -> str:
        return f"stage({self.name})"

    @property
    def iter_var_attrs(self) -> Dict[E.IterVar, IterAttr]:
        """The annotated axes and their annotations (TVM's `Stage.iter_var_attrs`)."""
        return dict(self.iter_attrs)

    # ---- checks ------------------------------------------------------------------------------
    def _fail(self, prim: str, msg: str):
        raise ScheduleError(f"{prim} on stage '{self.name}': {msg}")

    def _axis_name(self, iv) -> str:
        return getattr(iv, "name", repr(iv))

    def _check_op(self, prim: str):
        """An operation may refuse primitives (a scan's time loop is fixed): it names why."""
        refuse = getattr(self.op, "refuses", None)
        reason = refuse(prim) if refuse is not None else None
        if reason:
            self._fail(prim, reason)

    def _check_reattach(self, prim: str):
        if self.attach_type == "scan_update":
            self._fail(prim, f"it is the update of scan '{self.attach_stage.name}', computed at "
                             "each step of the scan's time loop; schedule its loops instead "
                             "(split, compute_at of its producers at its axes)")

    def _leaf(self, prim: str, iv) -> E.IterVar:
        self._check_op(prim)
        if not isinstance(iv, E.IterVar):
            self._fail(prim, f"{iv!r} is not an axis (IterVar)")
        if iv in self.leaf_iter_vars:
            return iv
        if iv in self.all_iter_vars:
            self._fail(prim, f"axis '{iv.name}' is not a leaf axis any more (it was already "
                             "split or fused); use the axes that split/fuse returned")
        self._fail(prim, f"axis '{iv.name}' does not belong to this stage (it belongs to "
                         "another stage's loops)")

    def _check_compute(self, prim: str):
        if self.is_placeholder:
            self._fail(prim, "a placeholder has no loops to schedule")
        self._check_op(prim)

    def _check_not_extern(self, prim: str):

        if isinstance(self.op, ExternOp):
            self._fail(prim, "an extern stage is one opaque statement computed at the root")

    def _attr(self, iv) -> IterAttr:
        if iv not in self.iter_attrs:
            self.iter_attrs[iv] = IterAttr()
        return self.iter_attrs[iv]

    # ---- loop structure ----------------------------------------------------------------------
    @_recorded
    def split(self, parent, factor=None, nparts=None):
        """Split `parent` into (outer, inner): by inner extent `factor` or outer extent
        `nparts`."""
        self._check_compute("split")
        parent = self._leaf("split", parent)
        if (factor is None) == (nparts is None):
            self._fail("split", f"give exactly one of factor= and nparts= for axis "
                                f"'{parent.name}'")
        amount = E.convert(factor if factor is not None else nparts)
        if isinstance(amount, E.IntImm) and amount.value <= 0:
            self._fail("split", f"the factor for axis '{parent.name}' must be positive, got "
                                f"{amount.value}")
        if isinstance(amount, E.IntImm) and str(amount.dtype) != str(parent.var.dtype):
            amount = E.const(amount.value, parent.var.dtype)  # an int64 (symbolic) axis
        outer = E.IterVar(None, E.Var(parent.name + ".outer", parent.var.dtype), parent.kind)
        inner = E.IterVar(None, E.Var(parent.name + ".inner", parent.var.dtype), parent.kind)
        self.relations.append(Split(parent, outer, inner,
                                    amount if factor is not None else None,
                                    amount if nparts is not None else None))
        pos = self.leaf_iter_vars.index(parent)
        self.leaf_iter_vars[pos:pos + 1] = [outer, inner]
        self.all_iter_vars += [outer, inner]
        return outer, inner

    @_recorded
    def fuse(self, *axes):
        """Fuse adjacent leaf axes (outermost first) into one. One axis is returned as it is;
        no axis at all makes a new outermost loop of extent 1 (named "singleton"), as TVM.
        Fusing a data axis with a reduction axis gives a reduction axis; the reduction's init
        then runs over the whole fused loop."""
        self._check_compute("fuse")
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        if not axes:
            unit = E.IterVar(E.Range(E.const(0), E.const(1)), E.Var("singleton"))
            self.relations.append(Singleton(unit))
            self.all_iter_vars.append(unit)
            self.leaf_iter_vars.insert(0, unit)
            return unit
        axes = [self._leaf("fuse", a) for a in axes]
        pos = [self.leaf_iter_vars.index(a) for a in axes]
        for (a, pa), (b, pb) in zip(zip(axes, pos), zip(axes[1:], pos[1:])):
            if pb != pa + 1:
                self._fail("fuse", f"axes '{a.name}' and '{b.name}' are not adjacent in the "
                                   "loop order (reorder them first, outer axis first)")
        fused = axes[0]
        for b in axes[1:]:
            wide = max((fused.var.dtype, b.var.dtype), key=lambda d: E.const(0, d).dtype.bits)
            # a data axis fused with a reduction axis gives a reduction axis (as TVM)
            kind = E.IterKind.REDUCE if E.IterKind.REDUCE in (fused.kind, b.kind) \
                else fused.kind
            new = E.IterVar(None, E.Var(f"{fused.name}.{b.name}.fused", wide), kind)
            self.relations.append(Fuse(fused, b, new))
            p = self.leaf_iter_vars.index(fused)
            self.leaf_iter_vars[p:p + 2] = [new]
            self.all_iter_vars.append(new)
            fused = new
        return fused

    @_recorded
    def reorder(self, *axes):
        """Put the given leaf axes in this order, in the positions they occupy now."""
        self._check_compute("reorder")
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        axes = [self._leaf("reorder", a) for a in axes]
        if len(set(map(id, axes))) != len(axes):
            self._fail("reorder", "an axis is given twice: "
                                  + ", ".join(f"'{a.name}'" for a in axes))
        pos = sorted(self.leaf_iter_vars.index(a) for a in axes)
        for p, a in zip(pos, axes):
            self.leaf_iter_vars[p] = a

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split two axes and reorder to (x.outer, y.outer, x.inner, y.inner)."""
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    # ---- annotations -------------------------------------------------------------------------
    def _annotate(self, prim: str, iv, kind: str):
        iv = self._leaf(prim, iv)
        if iv.kind == E.IterKind.REDUCE and kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
            how = "in parallel" if kind == ForKind.PARALLEL else "as a vector"
            self._fail(prim, f"cannot run the reduction axis '{iv.name}' {how}")
        self._attr(iv).kind = kind

    @_recorded
    def parallel(self, iv):
        self._annotate("parallel", iv, ForKind.PARALLEL)

    @_recorded
    def vectorize(self, iv):
        self._annotate("vectorize", iv, ForKind.VECTORIZED)

    @_recorded
    def unroll(self, iv):
        self._annotate("unroll", iv, ForKind.UNROLLED)

    @_recorded
    def bind(self, iv, thread_iv):
        iv = self._leaf("bind", iv)
        if not isinstance(thread_iv, E.IterVar) or not thread_iv.thread_tag:
            self._fail("bind", f"axis '{iv.name}' must be bound to te.thread_axis(...)")
        if thread_iv.thread_tag not in THREAD_TAGS:
            self._fail("bind", f"axis '{iv.name}': unknown thread tag "
                               f"'{thread_iv.thread_tag}'; use one of "
                               f"{', '.join(THREAD_TAGS)}")
        attr = self._attr(iv)
        attr.kind, attr.thread = ForKind.THREAD_BINDING, thread_iv

    @_recorded
    def pragma(self, iv, key: str, value=1):
        """Annotates leaf axis `iv` with `key = value`; the keys "unroll" and "vectorize" are
        those annotations (as `unroll(iv)`, `vectorize(iv)`)."""
        if key == "unroll":
            return self.unroll(iv)
        if key == "vectorize":
            return self.vectorize(iv)
        iv = self._leaf("pragma", iv)
        self._attr(iv).pragmas.append((key, E.convert(value)))
        return None

    @_recorded
    def prefetch(self, tensor, var, offset):
        """At each iteration of leaf axis `var`, prefetch the elements of `tensor` that the
        iteration `offset` iterations later reads (TVM's `Stage.prefetch`). Lowered per read
        (`inject_prefetch`): each read of `tensor` under the loop is preceded by a prefetch of
        the element it reads `offset` iterations on (the last iterations fetch their own), so
        the fetches spread over the iteration's work instead of arriving in one burst. A hint:
        no result changes."""
        iv = self._leaf("prefetch", var)
        if not isinstance(tensor, Tensor):
            self._fail("prefetch", f"{tensor!r} is not a tensor")
        attr = self._attr(iv)
        attr.prefetch_data.append(tensor)
        attr.prefetch_offset.append(E.convert(offset))

    # ---- attachment and storage --------------------------------------------------------------
    @_recorded
    def compute_at(self, parent: "Stage", axis):
        """Compute this stage inside `parent`'s loop `axis`, only the region that loop needs.
        `parent` may read it through other stages; lowering then requires every consumer of this
        stage to be computed inside that loop too (attached at it or at a loop nested in it)."""
        self._check_compute("compute_at")
        self._check_not_extern("compute_at")
        self._check_reattach("compute_at")
        if not isinstance(parent, Stage):
            self._fail("compute_at", "the first argument must be a stage (s[T])")
        self._check_group("compute_at", parent)
        if not isinstance(axis, E.IterVar) or axis not in parent.leaf_iter_vars:
            name = getattr(axis, "name", repr(axis))
            self._fail("compute_at", f"axis '{name}' is not a leaf axis of stage "
                                     f"'{parent.name}'")
        # As in TVM, an attachment that cannot be (at itself, at a stage that does not read
        # this one, in a cycle) is an error when the schedule is lowered (check_attachment).
        self.attach_type, self.attach_stage, self.attach_ivar = "scope", parent, axis

    def check_attachment(self) -> None:
        """Raises ScheduleError when this stage is computed at a loop of itself or of a stage
        that does not read it."""
        if self.attach_type != "scope" or self.attach_stage is None:
            return
        parent = self.attach_stage
        if parent is self:
            self._fail("compute_at", "a stage cannot be computed at itself")
        if not self.schedule.reads_transitively(parent, self):
            self._fail("compute_at", f"stage '{parent.name}' does not consume '{self.name}', "
                                     f"so '{self.name}' cannot be computed at its axis "
                                     f"'{self.attach_ivar.name}'")

    @_recorded
    def compute_inline(self):
        """Substitute this stage's expression into its consumers (no loops of its own)."""
        self._check_compute("compute_inline")
        self._check_not_extern("compute_inline")
        self._check_reattach("compute_inline")
        if self.op.reduce_axis:
            self._fail("compute_inline", "cannot inline a reduction; compute it in its own "
                                         "stage (compute_at or root)")
        self.attach_type, self.attach_stage, self.attach_ivar = "inline", None, None

    @_recorded
    def compute_root(self):
        """Compute this stage at the root of its group (the function's root when it has no
        group), as TVM."""
        self._check_compute("compute_root")
        self._check_reattach("compute_root")
        self.attach_type, self.attach_stage, self.attach_ivar = "root", None, None

    def _check_group(self, prim: str, parent: "Stage"):
        """A stage of a group (create_group, a scan's body) may only be computed at a stage of
        the same group or of a group nested in it, as TVM."""
        if self.group is None:
            return
        g = parent.group
        while g is not None and g is not self.group:
            g = g.group
        if g is None:
            self._fail(prim, f"it belongs to group '{self.group.name}', but stage "
                             f"'{parent.name}' is outside that group; compute it at a stage of "
                             "the same group")

    @_recorded
    def set_scope(self, scope: str):
        self.scope = scope

    @_recorded
    def storage_align(self, axis, factor: int, offset: int):
        """Pad this stage's allocation so that the stride of root axis `axis` (in elements) is
        `k * factor + offset` for some k, as TVM's (e.g. to avoid bank conflicts)."""
        self._check_compute("storage_align")
        self._check_not_extern("storage_align")
        root = list(self.op.axis)
        if not isinstance(axis, E.IterVar) or axis not in root:
            self._fail("storage_align", f"axis '{self._axis_name(axis)}' is not a data axis of "
                                        "the operation (give one of op.axis)")
        for name, v in (("factor", factor), ("offset", offset)):
            if isinstance(v, bool) or not isinstance(v, int):
                self._fail("storage_align", f"the {name} must be an int, got {v!r}")
        if factor <= 0 or not 0 <= offset < factor:
            self._fail("storage_align", f"need factor > 0 and 0 <= offset < factor, got factor "
                                        f"{factor} and offset {offset}")
        dim = root.index(axis)
        self.dim_align = tuple(a for a in self.dim_align if a[0] != dim) + \
            ((dim, factor, offset),)

    @_recorded
    def double_buffer(self):
        """Compute this stage into two buffers used in turn by the iterations of the loop it
        is computed at, the next iteration's data written while the current one is read
        (compiler/tir/transform/inject_double_buffer.py)."""
        self._check_compute("double_buffer")
        self._check_not_extern("double_buffer")
        self.double_buffered = True

    @_recorded
    def tensorize(self, var, tensor_intrin):
        """Replace the loops from leaf axis `var` inwards by the tensor intrinsic's statement
        (te.decl_tensor_intrin); lowering checks that the intrinsic computes what those loops
        compute (compiler/te/tensorize.py). As in TVM, a stage computed by a tensor intrinsic
        inside te.compute (compiler/te/tensor_compute.py) keeps that intrinsic: tensorizing
        it again changes nothing."""
        self._check_compute("tensorize")
        self._check_not_extern("tensorize")
        var = self._leaf("tensorize", var)
        if isinstance(self.op, TensorComputeOp) and self.tensorized is not None \
                and self.tensorized[1] is not tensor_intrin:
            return
        if not hasattr(tensor_intrin, "reduce_update"):
            self._fail("tensorize", f"{tensor_intrin!r} is not a TensorIntrin (make one with "
                                    "te.decl_tensor_intrin)")
        self.tensorized = (var, tensor_intrin)
        self._attr(var).tensorized = True
        self._attr(var).tensor_intrin = tensor_intrin
