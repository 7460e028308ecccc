"""legalize: primitive functions become loop-IR kernels built from the operator library, and
their calls `R.call_tir`.

before: `fuse_ops` ran: `main` calls primitive functions (attr "Primitive"), every shape static.
after:  each primitive function is replaced by a PrimFunc of the same name — its operators as
        topi tensor expressions (legalize_ops.LEGALIZE), scheduled by the topi schedule of its
        anchor operator (conv2d, dense, pooling, softmax, a reduction; else the injective
        schedule) for a CPU target, and lowered; `main` calls it as
        `R.call_tir(kernel, (args...), out_sinfo)`. An input of `main` with symbolic dims
        raises IRError saying how to bind them. Structurally equal primitive functions
        share one kernel (the other is dropped). An operator without a kernel raises
        UnsupportedOpError naming it. For a GPU target, a kernel whose schedule leaves a
        store on no GPU thread (a 0-d result) is scheduled for the CPU instead and gets attr
        HOST_FALLBACK ("kiln.host_fallback"): the graph keeps it on the host.
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional, Sequence

from ... import te, topi
from ...autotvm.dispatch import DispatchContext, tuned_schedule
from ...build_jobs import forked_map
from ...ir.errors import IRError, UnsupportedOpError
from ...ir.module import IRModule
from ...ir.structural_equal import structural_equal
from ...lower import lower
from ...target import Target
from ...tir.functor import IRVisitor
from ...tir.stmt import ForKind
from .. import expr as X
from ..op.base import call_tir
from ..shape_util import bind_shapes_message
from ..struct_info import TensorStructInfo, TupleStructInfo
from .fuse_ops import COMM_REDUCE, INJECTIVE, op_pattern
from .legalize_ops import LEGALIZE

# The schedule of a kernel, by its anchor operator (the others are fused around it): the name
# of the schedule in the target's schedule module (topi.x86 or topi.cuda).
_SCHEDULES: Dict[str, str] = {
    "relax.nn.conv2d": "schedule_conv2d_nchw",
    "relax.nn.conv2d_transpose": "schedule_conv2d_transpose_nchw",
    "relax.nn.contrib_conv2d_winograd_without_weight_transform":
        "schedule_conv2d_winograd_NCHWc",
    "relax.nn.dense": "schedule_dense",
    "relax.matmul": "schedule_matmul",     # 2-d; batched forms below
    "relax.nn.max_pool2d": "schedule_pool",
    "relax.nn.avg_pool2d": "schedule_pool",
    "relax.nn.adaptive_avg_pool2d": "schedule_adaptive_pool",
    "relax.nn.adaptive_max_pool2d": "schedule_adaptive_pool",
    "relax.nn.conv3d": "schedule_conv3d_ncdhw",
    "relax.nn.max_pool3d": "schedule_pool",
    "relax.nn.avg_pool3d": "schedule_pool",
    "relax.nn.adaptive_avg_pool3d": "schedule_adaptive_pool",
    "relax.nn.adaptive_max_pool3d": "schedule_adaptive_pool",
    "relax.nn.softmax": "schedule_softmax",
    "relax.nn.log_softmax": "schedule_softmax",
}


def schedules_for(target: Optional[Target]):
    """The schedule module of `target`: topi.cuda for a GPU kind, topi.x86 otherwise."""
    return topi.cuda if target is not None and not target.kind.is_host else topi.x86


def _anchor(calls: Sequence[X.Call]) -> X.Call:
    """The operator that decides the schedule: the strongest pattern, the first among equals."""
    best = calls[0]
    for c in calls[1:]:
        if op_pattern(c) > op_pattern(best):
            best = c
    return best


def _schedule_of(anchor: X.Call, target: Optional[Target] = None) -> Callable:
    tuned = tuned_schedule(anchor, target)  # a tuned config in the autotvm dispatch context
    if tuned is not None:
        return tuned
    sched = schedules_for(target)
    name = anchor.op.name
    if name == "relax.nn.conv2d" and anchor.attrs.data_layout != "NCHW":
        return sched.schedule_conv2d_NCHWc    # blocked layouts: CPU targets only
    if name == "relax.nn.conv2d" and anchor.attrs.groups != 1:
        return sched.schedule_group_conv2d_nchw
    if name == "relax.matmul" and any(a.struct_info.ndim != 2 for a in anchor.args):
        return sched.schedule_batch_matmul
    if name == "relax.nn.layer_norm" and sched is topi.x86:
        return sched.schedule_layer_norm
    if name in _SCHEDULES:
        return getattr(sched, _SCHEDULES[name])
    pattern = op_pattern(anchor)
    if pattern <= INJECTIVE:
        return sched.schedule_injective
    if pattern == COMM_REDUCE:
        return sched.schedule_reduce
    if sched is topi.cuda:
        return sched.schedule_fused
    return topi.generic.default_schedule


def _te_value(e: X.Expr, env: Dict[int, object]):
    if isinstance(e, X.Var):
        return env[id(e)]
    if isinstance(e, X.Constant):
        if e.data.ndim != 0:
            raise UnsupportedOpError("legalize: a tensor constant inside a kernel; run fuse_ops, "
                                     "which makes it an argument")
        return e.data.item()
    if isinstance(e, X.Tuple):
        return tuple(_te_value(f, env) for f in e.fields)
    if isinstance(e, X.ShapeExpr):
        return tuple(int(v) for v in e.values)
    if isinstance(e, X.PrimValue):
        return e.value
    if isinstance(e, (X.StringImm, X.DataTypeImm)):
        return e.value
    raise UnsupportedOpError(f"legalize: cannot pass {e!r} to a kernel")


def _placeholder(p: X.Var) -> te.Tensor:
    s = p.struct_info
    if not (isinstance(s, TensorStructInfo) and s.is_static):
        raise UnsupportedOpError(f"legalize: kernel argument {p.name_hint!r} has struct info {s}; "
                                 "kernels of the graph executor need static tensor shapes")
    return te.placeholder(tuple(s.shape), dtype=s.dtype, name=p.name_hint)


def lower_primitive(func: X.Function, name: str, target: Optional[Target] = None):
    """The PrimFunc of a primitive function (lowered, named `name`), scheduled for `target`
    (None: a CPU)."""
    env: Dict[int, object] = {}
    inputs = [_placeholder(p) for p in func.params]
    for p, t in zip(func.params, inputs):
        env[id(p)] = t
    calls: List[X.Call] = []
    for block in func.body.blocks:
        for b in block.bindings:
            call = b.value
            if not (isinstance(call, X.Call) and isinstance(call.op, X.Op)):
                raise UnsupportedOpError(f"legalize: {name} binds {call!r}, not an operator call")
            fn = LEGALIZE.get(call.op.name)
            if fn is None:
                raise UnsupportedOpError(f"operator {call.op.name} has no kernel in the operator "
                                         f"library (in {name})")
            env[id(b.var)] = fn(call, [_te_value(a, env) for a in call.args])
            calls.append(call)
    out = env[id(func.body.body)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    outs = [topi.identity(t) if t in inputs else t for t in outs]
    if target is None or target.kind.is_host:
        sch = _schedule_of(_anchor(calls), target)(outs)
        return lower(sch, inputs + outs, name=name)[name]
    with target:
        sch = _schedule_of(_anchor(calls), target)(outs)
        func = lower(sch, inputs + outs, name=name)[name]
    if _runs_on_threads(func):
        return func
    # nothing to spread over GPU threads (a 0-d result): the kernel stays on the host
    sch = _schedule_of(_anchor(calls), None)(outs)
    return lower(sch, inputs + outs, name=name)[name].with_attr(HOST_FALLBACK, True)


# Fewer distinct kernels than this are lowered in this process (workers cost more).
PARALLEL_MIN_KERNELS = 4


def _lower_all(made, target, progress):
    """(name, PrimFunc) of each (primitive function, name) in `made`, in order: by forked
    workers (`forked_map`) when there are several and no tuning context is active (it records
    what it applied in this process), else here. `progress(k, total, name)` is called as the
    k-th is about to be lowered here, or has been lowered by a worker."""
    total = len(made)
    results = None
    if total >= PARALLEL_MIN_KERNELS and DispatchContext.current() is None:
        results = forked_map([functools.partial(lower_primitive, f, n, target)
                              for f, n in made])
    for k, (func, name) in enumerate(made):
        if results is None:
            if progress is not None:
                progress(k + 1, total, name)
            prim = lower_primitive(func, name, target)
        else:
            prim = next(results)
            if progress is not None:
                progress(k + 1, total, name)
        yield name, prim


# attr of a kernel of a GPU build that runs on the host CPU instead (see _runs_on_threads)
HOST_FALLBACK = "kiln.host_fallback"


def _runs_on_threads(func) -> bool:
    """Whether every store of `func` is inside a loop bound to a GPU launch axis."""
    outside = []

    class V(IRVisitor):
        depth = 0

        def visit_For(self, loop):
            bound = loop.kind == ForKind.THREAD_BINDING
            V.depth += bound
            self.generic_visit(loop)
            V.depth -= bound

        def visit_BufferStore(self, st):
            if V.depth == 0:
                outside.append(st)

    V().visit(func.body)
    return not outside


def legalize(mod: IRModule, func_name: str = "main",
             progress: Optional[Callable[[int, int, str], None]] = None,
             target=None) -> IRModule:
    """`mod` with its primitive functions lowered to PrimFuncs called by R.call_tir, scheduled
    for `target` (a Target or its string; None: a CPU).
    `progress(k, total, name)`, when given, is called for the k-th (from 1) of the `total`
    distinct primitive functions, before it is lowered here or after a worker lowered it
    (`_lower_all`)."""
    target = Target(target) if target is not None else None
    unbound = bind_shapes_message(mod[func_name].params)
    if unbound:
        raise IRError(unbound)
    functions = dict(mod.functions)
    kernels: Dict[str, X.GlobalVar] = {}
    made: List[tuple] = []      # (primitive function, kernel name) of each distinct one
    for name, func in mod.items():
        if isinstance(func, X.Function) and func.attrs.get("Primitive"):
            del functions[name]
            same = next((k for f, k in made if structural_equal(f, func)), None)
            if same is None:
                made.append((func, name))
                same = name
            kernels[name] = X.GlobalVar(same)
    for name, prim in _lower_all(made, target, progress):
        functions[name] = prim
    main = mod[func_name]
    blocks = []
    for block in main.body.blocks:
        bindings = []
        for b in block.bindings:
            v = b.value
            if isinstance(v, X.Call) and isinstance(v.op, X.GlobalVar) and \
                    v.op.name_hint in kernels:
                out = v.struct_info
                out_sinfo = list(out.fields) if isinstance(out, TupleStructInfo) else out
                v = call_tir(kernels[v.op.name_hint], v.args, out_sinfo)
                b = X.VarBinding(b.var, v)
            bindings.append(b)
        blocks.append(type(block)(tuple(bindings)))
    functions[func_name] = X.Function(main.params, X.SeqExpr(tuple(blocks), main.body.body),
                                      main.ret_struct_info, main.is_pure, main.attrs)
    return mod.with_functions(functions)


