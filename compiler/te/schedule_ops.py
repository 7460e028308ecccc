"""Schedule → PrimFunc: inline, bind arguments to buffers, infer bounds, allocate intermediate
tensors and emit every stage's loop nest where it is attached.

The body uses multi-dimensional BufferLoad/BufferStore. Argument tensors are bound through the
function's buffer_map; every other computed tensor gets an `Allocate` in its stage's scope
("global" unless set_scope/cache_*), sized by the region bound inference found, at the root of
the function or inside the loop it is computed at. An extern stage's statement is placed at the
root with its placeholder buffers bound to the storage of its input and output tensors, which
are computed whole; so is a hybrid stage's statement (hybrid_stmt.py).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..arith import relax, simplify
from ..ir.dtype import handle
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer
from ..tir.function import PrimFunc
from ..tir.functor import collect_vars
from ..tir.stmt import Allocate, ProducerRealize, Stmt, seq
from .bound import infer_bounds, storage_scope
from .compute_stmt import make_extern_stmt, make_stage_stmt
from .group import resolve_attachments
from .hybrid_op import HybridOp
from .hybrid_stmt import make_hybrid_stmt
from .inline import inline_bodies
from .scan import ScanOp, allocate_scan, check_scans, make_scan_stmt, scan_full_stages
from .stage import Stage
from .storage import aligned_strides, check_double_buffer, mark_double_buffer
from .tensor import ExternOp, PlaceholderOp, Tensor, tensor_loads
from .tensorize import make_tensorize_stmt
from .thread_scope import finish_thread_scopes

# Operations computed whole at the root that read their inputs whole: an extern stage's
# opaque statement, a hybrid script's statement.
_WHOLE_OPS = (ExternOp, HybridOp)


def _kind(st: Stage) -> str:
    return "hybrid" if isinstance(st.op, HybridOp) else "extern"


class _Lowering:
    def __init__(self, sch, args: Sequence, binds: Optional[Dict], realize: bool = False):
        self.sch = sch
        self.realize = realize  # ProducerRealize each computed tensor instead of Allocate
        self.binds = dict(binds or {})
        self.storage: Dict[Tuple[int, int], Tuple[Buffer, tuple]] = {}
        self.params: List[E.Var] = []
        self.buffer_map: List[Tuple[E.Var, Buffer]] = []
        self.arg_stages = set()
        for a in args:
            self._bind_arg(a)

    def _bind_arg(self, a):
        if isinstance(a, Tensor):
            buf = self.binds.get(a) or decl_buffer(a.shape, a.dtype, a.name)
            st = self.sch.stage_map.get(a.op)
            if st is None and not isinstance(a.op, PlaceholderOp):
                raise ScheduleError(f"argument '{a.name}' is not a tensor of this schedule")
            if st is not None:  # a placeholder nothing reads is an unused argument, as in TVM
                self.storage[(id(st), a.value_index)] = (buf, (E.const(0),) * a.ndim)
                self.arg_stages.add(st)
            param = E.Var(a.name, handle)
            self.params.append(param)
            self.buffer_map.append((param, buf))
        elif isinstance(a, Buffer):
            param = E.Var(a.name, handle)
            self.params.append(param)
            self.buffer_map.append((param, a))
        elif isinstance(a, E.Var):
            self.params.append(a)
        else:
            raise ScheduleError(f"lower: argument {a!r} is not a Tensor, Buffer or Var")

    def resolve(self, t: Tensor):
        st = self.sch.stage_map.get(t.op)
        key = (id(st), t.value_index)
        if key not in self.storage:
            if st is None or st.is_placeholder:
                raise ScheduleError(f"placeholder '{t.name}' is read but is not in lower()'s "
                                    "args; pass it as an argument")
            raise ScheduleError(f"tensor '{t.name}' has no storage (internal ordering issue)")
        return self.storage[key]

    def infer(self) -> Dict[Stage, tuple]:
        """Check the attachments and infer the bounds (`self.bounds`); the computed stages and
        their bodies after inlining."""
        sch = self.sch
        self.bodies = bodies = inline_bodies(sch)
        for st in sch.stages:
            # an inlined argument is left unused (as TVM); an inlined output would never be
            # written
            if st.attach_type == "inline" and st.is_output:
                raise ScheduleError(f"compute_inline on stage '{st.name}': it is an output of "
                                    "the schedule, so it must be computed")
            if st.attach_type == "scope" and st.attach_stage.attach_type == "inline":
                raise ScheduleError(f"compute_at on stage '{st.name}': its parent stage "
                                    f"'{st.attach_stage.name}' was inlined")
        for st in sch.stages:
            check_double_buffer(st)
        computed = {st: bodies[st] for st in sch.stages
                    if not st.is_placeholder and st.attach_type != "inline"}
        check_scans(sch, computed)
        self._check_attach(computed)
        extern_inputs = self._extern_inputs(computed)
        # An argument computed at a consumer's loop covers what that loop needs there (as
        # TVM: `s[B].compute_at(s[C], i)` with B in the args writes B[i] in iteration i).
        full = {st for st in computed
                if (st in self.arg_stages and st.attach_type != "scope") or st.is_output
                or st in extern_inputs or isinstance(st.op, _WHOLE_OPS)} | scan_full_stages(sch)
        self.bounds = infer_bounds(sch, computed, full)
        return computed

    def run(self, name: str) -> PrimFunc:
        computed = self.infer()
        self.attached: Dict[Tuple[int, int], List[Stage]] = {}
        for st in computed:
            if st.attach_type == "scope":
                self.attached.setdefault((id(st.attach_stage), id(st.attach_ivar)), []).append(st)
        self.allocs: Dict[Stage, List[Buffer]] = {}
        for st in sorted(computed, key=lambda s: not isinstance(s.op, ScanOp)):
            self.allocs[st] = self._allocate(st)  # scans first: their parts share their buffers
        body = seq(*[self._emit(st) for st in computed if st.attach_type == "root"])
        for st in reversed([s for s in computed if s.attach_type == "root"]):
            body = self._store(st, body)
        body = finish_thread_scopes(body)
        return PrimFunc(tuple(self.params), body, tuple(self.buffer_map),
                        {"global_symbol": name, "tir.noalias": True})

    def _check_attach(self, computed):
        """A stage computed at `parent`'s loop `axis` is recomputed for each iteration of that
        loop, so every stage that reads it must run inside that loop too: `parent` itself, or a
        stage attached (directly or through other attached stages) at `axis` or a loop of
        `parent` nested in it. `parent` need not read the stage directly (P -> M -> C with M and
        P both at C's loop): bound inference derives P's region from M's region there."""

        attached = [st for st in computed if st.attach_type == "scope"]
        for st in attached:
            if st.attach_ivar not in st.attach_stage.leaf_iter_vars:
                raise ScheduleError(f"{_where(st)}: the axis was fused after compute_at as "
                                    "the outer operand of the fuse, so no loop is left at it; "
                                    "compute it at the fused axis (or one split from it)")
        readers: Dict[Stage, List[Stage]] = {}
        for c in computed:
            tensors = c.op.input_tensors if isinstance(c.op, _WHOLE_OPS) else \
                [ld.tensor for b in self.bodies[c] for ld in tensor_loads(b)]
            read = {self.sch.stage_map.get(t.op) for t in tensors}
            for p in read:
                readers.setdefault(p, []).append(c)
        for st in attached:
            if not readers.get(st):
                raise ScheduleError(f"{_where(st)}: no stage inside that loop reads "
                                    f"'{st.name}' (compute it at a stage that consumes it)")
            for reader in readers[st]:
                if isinstance(reader.op, _WHOLE_OPS):
                    continue  # _extern_inputs: what an extern stage reads is computed at root
                if not _runs_inside(reader, st.attach_stage, st.attach_ivar):
                    raise ScheduleError(
                        f"{_where(st)}: its consumer '{reader.name}' is not computed inside "
                        f"that loop, so it would read '{st.name}' outside the loop that "
                        f"computes it; compute '{reader.name}' at that loop (or one nested in "
                        "it) too")

    def _extern_inputs(self, computed) -> set:
        """Stages an extern stage reads: they are computed whole, at the root, so the extern's
        statement sees complete tensors."""
        found = set()
        for st in computed:
            if not isinstance(st.op, _WHOLE_OPS):
                continue
            for t in st.op.input_tensors:
                producer = self.sch.stage_map.get(t.op)
                if producer is None or producer.is_placeholder:
                    continue
                if producer.attach_type != "root":
                    how = "inlined" if producer.attach_type == "inline" else "computed at " \
                        f"stage '{producer.attach_stage.name}'"
                    raise ScheduleError(f"stage '{producer.name}' is {how}, but the "
                                        f"{_kind(st)} stage '{st.name}' reads it whole; "
                                        "compute it at the root")
                found.add(producer)
        return found

    def _allocate(self, st: Stage) -> List[Buffer]:
        if isinstance(st.op, ScanOp):
            return allocate_scan(self, st)
        dom = self.bounds.dom
        bufs = []
        for t in st.op.outputs:
            key = (id(st), t.value_index)
            if key in self.storage:
                if st.dim_align:
                    raise ScheduleError(f"storage_align on stage '{st.name}': '{t.name}' is an "
                                        "argument of the function, laid out by the caller; "
                                        "align a cache stage (cache_read/cache_write) instead")
                continue
            if isinstance(st.op, _WHOLE_OPS):
                buf = decl_buffer(t.shape, t.dtype, t.name, scope=storage_scope(st))
                self.storage[key] = (buf, (E.const(0),) * t.ndim)
                bufs.append(buf)
                continue
            shape, mins = [], []
            for iv in st.op.axis:
                r = dom[iv]
                ext = r.extent
                if any(v in self.bounds.loop_ranges for v in _vars(ext)):
                    hi = relax(ext, self.bounds.loop_ranges)
                    ext = iv.dom.extent if hi is None else hi[1]
                shape.append(simplify(ext))
                mins.append(r.min)
            strides = aligned_strides(shape, st.dim_align) if st.dim_align else ()
            buf = decl_buffer(shape, t.dtype, t.name, scope=storage_scope(st),
                              strides=strides)
            self.storage[key] = (buf, tuple(mins))
            bufs.append(buf)
        return bufs

    def _emit(self, st: Stage) -> Stmt:
        if isinstance(st.op, ExternOp):
            return make_extern_stmt(st, self.resolve)
        if isinstance(st.op, HybridOp):
            return make_hybrid_stmt(st, self.bounds, self.resolve)
        if isinstance(st.op, ScanOp):
            return make_scan_stmt(st, self.bounds, self._attach)
        if st.tensorized is not None:
            return make_tensorize_stmt(st, self.bodies[st], self.bounds, self.resolve,
                                       self._attach)
        return make_stage_stmt(st, self.bodies[st], self.bounds, self.resolve, self._attach)

    def _attach(self, parent: Stage, iv: E.IterVar, body: Stmt) -> Stmt:
        stages = self.attached.get((id(parent), id(iv)), [])
        if not stages:
            return body
        body = seq(*[mark_double_buffer(s, self.allocs[s], self._emit(s)) for s in stages],
                   body)
        for s in reversed(stages):
            body = self._store(s, body)
        return body

    def _store(self, st: Stage, body: Stmt) -> Stmt:
        """`body` inside the storage of `st`'s tensors: an Allocate of each buffer it got, or
        (`self.realize`, TVM's ScheduleOps) a ProducerRealize of each of its output tensors,
        arguments included, over the region the stage computes."""
        if not self.realize:
            for buf in reversed(self.allocs[st]):
                body = Allocate(buf, body)
            return body
        for t in reversed(st.op.outputs):
            buf, mins = self.storage[(id(st), t.value_index)]
            bounds = tuple(E.Range(m, e) for m, e in zip(mins, buf.shape))
            body = ProducerRealize(t, bounds, E.const(True), body, buf.scope)
        return body


def _where(st: Stage) -> str:
    return f"compute_at on stage '{st.name}' at axis '{st.attach_ivar.name}' of stage " \
        f"'{st.attach_stage.name}'"


def _runs_inside(stage: Stage, parent: Stage, axis: E.IterVar) -> bool:
    """Whether `stage` runs inside `parent`'s loop `axis`: it is `parent`, or its chain of
    compute_at reaches `parent` at `axis` or at a loop nested in it."""
    limit = parent.leaf_iter_vars.index(axis)
    while stage is not parent:
        if stage.attach_type != "scope":
            return False
        if stage.attach_stage is parent:
            return parent.leaf_iter_vars.index(stage.attach_ivar) >= limit
        stage = stage.attach_stage
    return True


def _vars(e):

    return collect_vars(e)


def infer_schedule_bounds(sch) -> Dict[E.IterVar, E.Range]:
    """The Range of every axis of every computed stage of `sch` (roots, split and fused parts,
    reduction axes) and of every thread axis a loop is bound to, as lowering infers them when
    no tensor is an argument but the outputs (TVM's `InferBound`)."""
    low = _Lowering(resolve_attachments(sch), [], None)
    low.infer()
    return dict(low.bounds.dom)


def schedule_to_primfunc(sch, args: Sequence, name: str = "main",
                         binds: Optional[Dict] = None) -> PrimFunc:
    """The PrimFunc computing `sch` with `args` as parameters (multi-dimensional accesses)."""
    return _Lowering(resolve_attachments(sch), args, binds).run(name)



def schedule_ops(sch, bounds=None, debug_keep_trivial_loop: bool = False) -> Stmt:
    """The loop nests of `sch` as one statement (TVM's `ScheduleOps`), its placeholders and
    outputs bound to buffers of their own names, every computed tensor (outputs too) held by a
    ProducerRealize around the code that computes and reads it. Bounds are inferred again, so
    `bounds` (what `InferBound` returned) and `debug_keep_trivial_loop` change nothing."""
    del bounds, debug_keep_trivial_loop
    sch = resolve_attachments(sch)
    args = [t for st in sch.stages if st.is_placeholder or st.is_output for t in st.op.outputs]
    return _Lowering(sch, args, None, realize=True).run("main").body
