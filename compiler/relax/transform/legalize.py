"""legalize: primitive functions become loop-IR kernels built from the operator library, and
their calls `R.call_tir` (TVM's LegalizeOps, for both executors).

before: `fuse_ops` ran: graph-level functions call primitive functions (attr "Primitive"),
        in their bindings and in the branches of If expressions; dims may be symbolic.
after:  each primitive function is replaced by a PrimFunc of the same name — its operators as
        topi tensor expressions (each call's compute from its operator's strategy for the
        target, compiler/relax/strategy), scheduled by the strategy of its anchor operator,
        and lowered — and every
        call of it is `R.call_tir(kernel, (args...), out_sinfo)`. A kernel's symbolic dims are
        those of its arguments' buffers (the PrimFunc reads them from the tensors it gets); a
        kernel whose shapes are symbolic and whose schedule needs static extents falls back to
        the generic schedule (on a GPU: legalize_gpu.py). Structurally equal primitive
        functions share one kernel (the other is dropped). An operator without a kernel raises
        UnsupportedOpError naming it. For a GPU target, a kernel whose schedule leaves a store on
        no GPU thread (a 0-d result) is scheduled for the CPU instead and gets attr
        HOST_FALLBACK ("kiln.host_fallback"): the executors keep it on the host.
        Several kernels are lowered by forked workers (`PARALLEL_MIN_KERNELS`); a kernel
        lowered before comes from the build cache (legalize_cache.py).
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional

from ... import te, topi
from ...build_jobs import forked_map
from ...ir.errors import CompilerError, IRError, UnsupportedOpError
from ...ir.module import IRModule
from ...ir.structural_equal import structural_equal
from ...lower import lower
from ...target import Target
from ...tir import expr as E
from ...tir.functor import collect_vars
from .. import expr as X
from ..op.base import call_tir
from ..strategy import TuningSeat, anchor_of, schedule_of, strategy_of
from ..struct_info import TensorStructInfo, TupleStructInfo
from . import legalize_cache, legalize_ops  # noqa: F401  (legalize_ops: the computes)
from .legalize_gpu import HOST_FALLBACK, lower_gpu_kernel

# Errors a schedule raises when it cannot handle a kernel's (symbolic) shapes.
_SCHEDULE_ERRORS = (IRError, CompilerError, TypeError, ValueError)


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
        return tuple(e.values)
    if isinstance(e, X.PrimValue):
        return e.value
    if isinstance(e, (X.StringImm, X.DataTypeImm)):
        return e.value
    what = f"a call of {e.op.name}" if isinstance(e, X.Call) and isinstance(e.op, X.Op) \
        else f"a {type(e).__name__}"
    raise UnsupportedOpError(f"legalize: cannot pass {what} to a kernel as an argument (bind "
                             "it to a variable first)")


def _placeholder(p: X.Var, kernel: str, dims: "_KernelDims") -> te.Tensor:
    s = p.struct_info
    if not (isinstance(s, TensorStructInfo) and s.shape is not None and s.dtype != "void"):
        raise UnsupportedOpError(
            f"kernel {kernel}: argument {p.name_hint!r} has struct info {s}; a kernel needs "
            "each tensor's rank and dtype (dims may be symbolic): match_cast the value to "
            "R.Tensor((n, ...), dtype) first")
    return te.placeholder(tuple(dims.of(d) for d in s.shape), dtype=s.dtype, name=p.name_hint)


class _KernelDims:
    """The dims of a kernel's arguments as the kernel sees them, in argument order: an int or
    a variable as it is, and so a computed dim whose variables are dims of an argument before
    it (the kernel reads them from its buffers, in that order); any other computed dim (`h //
    2` of a pooled tensor, where `h` is no dim of any argument, or `n + 1` before the argument
    of dim `n`) becomes a variable of its own, one per distinct expression, read from the
    buffer like the others."""

    def __init__(self):
        self.defined = set()
        self.fresh: List[tuple] = []

    def of(self, d):
        if isinstance(d, E.Var):
            self.defined.add(id(d))
        if isinstance(d, (int, E.Var)) or all(id(v) in self.defined for v in collect_vars(d)):
            return d
        for expr, var in self.fresh:
            if structural_equal(expr, d):
                return var
        var = E.Var(f"dim{len(self.fresh)}", d.dtype)
        self.fresh.append((d, var))
        return var


def lower_primitive(func: X.Function, name: str, target: Optional[Target] = None):
    """The PrimFunc of a primitive function (lowered, named `name`; dims may be symbolic),
    scheduled for `target` (None: a CPU). A CPU target is the current one (`with target`)
    while the kernel is computed and scheduled, so templates that size their tiles by the
    vector ISA (compiler/target/isa.py) size them for it, not for the host."""
    if target is None or not target.kind.is_host or Target.current() is target:
        return _lower_primitive(func, name, target)
    with target:
        return _lower_primitive(func, name, target)


def _lower_primitive(func: X.Function, name: str, target: Optional[Target]):
    env: Dict[int, object] = {}
    dims = _KernelDims()
    inputs = [_placeholder(p, name, dims) for p in func.params]
    for p, t in zip(func.params, inputs):
        env[id(p)] = t
    calls: List[X.Call] = []
    for block in func.body.blocks:
        for b in block.bindings:
            call = b.value
            if not (isinstance(call, X.Call) and isinstance(call.op, X.Op)):
                raise UnsupportedOpError(f"legalize: {name} binds {call!r}, not an operator call")
            fn = strategy_of(call, target).compute
            if fn is None:
                raise UnsupportedOpError(f"operator {call.op.name} has no kernel in the operator "
                                         f"library (in {name})")
            env[id(b.var)] = fn(call, [_te_value(a, env) for a in call.args])
            calls.append(call)
    out = env[id(func.body.body)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    outs = [topi.identity(t) if t in inputs else t for t in outs]
    symbolic = any(not (isinstance(p.struct_info, TensorStructInfo) and p.struct_info.is_static)
                   for p in func.params)
    if target is not None and not target.kind.is_host:
        return lower_gpu_kernel(calls, inputs, outs, name, target, symbolic)
    try:
        sch = schedule_of(anchor_of(calls), target)(outs)
        return lower(sch, inputs + outs, name=name)[name]
    except _SCHEDULE_ERRORS:
        if not symbolic:
            raise
    sch = topi.generic.default_schedule(outs)
    return lower(sch, inputs + outs, name=name)[name]


# Fewer distinct kernels than this are lowered in this process (workers cost more).
PARALLEL_MIN_KERNELS = 4


def _lower_all(made, target, progress):
    """(name, PrimFunc) of each (primitive function, name) in `made`, in order: from the build
    cache when lowered before (legalize_cache.py), else by forked workers (`forked_map`) when
    there are several and no tuning context occupies the seat (it records what it applied in
    this process), else here. `progress(k, total, name)` is called as the k-th is about to be
    lowered here, or has been lowered by a worker or read from the cache."""
    total = len(made)
    keys = [legalize_cache.lowering_key(f, n, target) for f, n in made]
    cached = [legalize_cache.load(k) for k in keys]
    todo = [made[k] for k in range(total) if cached[k] is None]
    results = None
    if len(todo) >= PARALLEL_MIN_KERNELS and TuningSeat.current() is None:
        results = forked_map([functools.partial(lower_primitive, f, n, target) for f, n in todo])
    for k, (func, name) in enumerate(made):
        prim = cached[k]
        if prim is None and results is None:
            if progress is not None:
                progress(k + 1, total, name)
            prim = lower_primitive(func, name, target)
        else:
            if prim is None:
                prim = next(results)
            if progress is not None:
                progress(k + 1, total, name)
        if cached[k] is None:
            legalize_cache.store(keys[k], prim)
        yield name, prim


def _call_tir_seq(seq: X.SeqExpr, kernels: Dict[str, X.GlobalVar]) -> X.SeqExpr:
    """`seq` with its calls of primitive functions (and those in If branches) as call_tir."""
    blocks = []
    for block in seq.blocks:
        bindings = []
        for b in block.bindings:
            v = b.value
            if isinstance(v, X.Call) and isinstance(v.op, X.GlobalVar) and \
                    v.op.name_hint in kernels:
                out = v.struct_info
                out_sinfo = list(out.fields) if isinstance(out, TupleStructInfo) else out
                b = X.VarBinding(b.var, call_tir(kernels[v.op.name_hint], v.args, out_sinfo))
            elif isinstance(v, X.If):
                v = X.If(v.cond, _call_tir_seq(v.true_branch, kernels),
                         _call_tir_seq(v.false_branch, kernels))
                b = X.MatchCast(b.var, v, b.struct_info) if isinstance(b, X.MatchCast) \
                    else X.VarBinding(b.var, v)
            bindings.append(b)
        blocks.append(type(block)(tuple(bindings)))
    return X.SeqExpr(tuple(blocks), seq.body)


def legalize(mod: IRModule, progress: Optional[Callable[[int, int, str], None]] = None,
             target=None) -> IRModule:
    """`mod` with its primitive functions lowered to PrimFuncs called by R.call_tir, scheduled
    for `target` (a Target or its string; None: a CPU).
    `progress(k, total, name)`, when given, is called for the k-th (from 1) of the `total`
    distinct primitive functions, before it is lowered here or after a worker lowered it."""
    target = Target(target) if target is not None else None
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
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            functions[name] = X.Function(func.params, _call_tir_seq(func.body, kernels),
                                         func.ret_struct_info, func.is_pure, func.attrs)
    return mod.with_functions(functions)


__all__ = ["HOST_FALLBACK", "PARALLEL_MIN_KERNELS", "legalize", "lower_primitive"]
