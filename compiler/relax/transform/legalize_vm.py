"""legalize_vm: fusion and kernels for the VM, in every function and every branch, with
symbolic shapes.

before: graph-level functions in normal form (constants folded, local functions lifted); they
        may call each other, hold If expressions, tuples, closures and symbolic dims.
after:  every operator call with a kernel in the operator library, in every graph-level
        function and in every branch of an If, is `R.call_tir(kernel, (args...), out_sinfo)`:
        operators are grouped as `fuse_ops` groups them (inside one sequence of bindings; an If
        is a boundary), each group lowered to a PrimFunc with topi. A kernel's symbolic dims are
        those of its arguments' buffers (the PrimFunc reads them from the tensors it gets); a
        kernel whose shapes are symbolic and whose tuned schedule needs static extents falls
        back to the generic schedule (injective stages inlined). Structurally equal groups share
        one kernel. Variable aliases (`b = a`) are gone. Calls of other functions, closures,
        builtins and match_casts stay as they are. For a GPU target (`legalize_vm(mod,
        target)`) the kernels get GPU schedules (legalize_vm_gpu.py), those with no store on
        a GPU thread stay on the host (attr HOST_FALLBACK), as `legalize` does.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from ... import te, topi
from ...ir.errors import CompilerError, IRError, UnsupportedOpError
from ...ir.module import IRModule
from ...ir.structural_equal import structural_equal
from ...lower import lower
from ...target import Target
from .. import expr as X
from ..functor import ExprMutator
from ..op.base import call_tir
from ..struct_info import TensorStructInfo, TupleStructInfo
from .fuse_ops import _Fuser, _Group, _op_short, _primitive, _resolve_all
from .legalize import _anchor, _schedule_of
from .legalize_ops import LEGALIZE
from .legalize_vm_gpu import lower_gpu_kernel


def _te_value(e: X.Expr, env: Dict[int, object]):
    if isinstance(e, X.Var):
        return env[id(e)]
    if isinstance(e, X.Constant):
        if e.data.ndim != 0:
            raise UnsupportedOpError("legalize_vm: a tensor constant inside a kernel")
        return e.data.item()
    if isinstance(e, X.Tuple):
        return tuple(_te_value(f, env) for f in e.fields)
    if isinstance(e, X.ShapeExpr):
        return tuple(e.values)
    if isinstance(e, X.PrimValue):
        return e.value
    if isinstance(e, (X.StringImm, X.DataTypeImm)):
        return e.value
    raise UnsupportedOpError(f"legalize_vm: cannot pass {e!r} to a kernel")


def _placeholder(p: X.Var, kernel: str) -> te.Tensor:
    s = p.struct_info
    if not (isinstance(s, TensorStructInfo) and s.shape is not None and s.dtype != "void"):
        raise UnsupportedOpError(
            f"kernel {kernel}: argument {p.name_hint!r} has struct info {s}; a kernel needs "
            "each tensor's rank and dtype (dims may be symbolic): match_cast the value to "
            "R.Tensor((n, ...), dtype) first")
    return te.placeholder(tuple(s.shape), dtype=s.dtype, name=p.name_hint)


def lower_kernel(func: X.Function, name: str, target=None):
    """The PrimFunc (lowered, named `name`) of a primitive function whose dims may be
    symbolic, scheduled for `target` (None: a CPU)."""
    env: Dict[int, object] = {}
    inputs = [_placeholder(p, name) for p in func.params]
    for p, t in zip(func.params, inputs):
        env[id(p)] = t
    calls: List[X.Call] = []
    for block in func.body.blocks:
        for b in block.bindings:
            call = b.value
            fn = LEGALIZE.get(call.op.name)
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
        sch = _schedule_of(_anchor(calls))(outs)
        return lower(sch, inputs + outs, name=name)[name]
    except (IRError, CompilerError, TypeError, ValueError):
        if not symbolic:
            raise
    sch = topi.generic.default_schedule(outs)
    return lower(sch, inputs + outs, name=name)[name]


class _Kernels:
    """The kernels made so far (one per structurally distinct group)."""

    def __init__(self, functions: Dict[str, object], target=None):
        self.functions = functions
        self.target = target
        self.made: List[Tuple[X.Function, str]] = []

    def kernel_for(self, prim: X.Function, base: str) -> X.GlobalVar:
        for f, k in self.made:
            if structural_equal(f, prim):
                return X.GlobalVar(k)
        name, i = base, 0
        while name in self.functions:
            i += 1
            name = f"{base}{i}"
        self.functions[name] = lower_kernel(prim, name, self.target)
        self.made.append((prim, name))
        return X.GlobalVar(name)


class _Rename(ExprMutator):
    def __init__(self, remap):
        super().__init__()
        self.var_remap.update(remap)


def _fuse_seq(seq: X.SeqExpr, kernels: _Kernels) -> X.SeqExpr:
    if not X.is_leaf(seq.body):
        # a computed result (an If branch's `x * 2`) is bound first, so that it is fused too
        ret = X.Var("ret", seq.body.struct_info)
        seq = X.SeqExpr(seq.blocks + (X.BindingBlock((X.VarBinding(ret, seq.body),)),), ret)
    fuser = _Fuser(X.Function((), seq))
    groups = fuser.groups()
    aliases = {k: fuser.resolve(v) for k, v in fuser.alias.items()}
    rename = _Rename(aliases)
    bindings: List[X.Binding] = []
    for item in groups:
        if not isinstance(item, _Group):
            b = item
            value = _resolve_all(b.value, fuser)
            if isinstance(value, X.If):
                value = rename.visit_expr(value)
                value = X.If(value.cond, _fuse_seq(value.true_branch, kernels),
                             _fuse_seq(value.false_branch, kernels))
            if isinstance(b, X.MatchCast):
                bindings.append(X.MatchCast(b.var, value, b.struct_info))
            else:
                bindings.append(X.VarBinding(b.var, value))
            continue
        prim, args = _primitive(item)
        base = "fused_" + "_".join(_op_short(b.value.op.name) for b in item.bindings)
        gv = kernels.kernel_for(prim, base)
        out = item.out.struct_info
        out_sinfo = list(out.fields) if isinstance(out, TupleStructInfo) else out
        bindings.append(X.VarBinding(item.out, call_tir(gv, args, out_sinfo)))
    body = _resolve_all(fuser.resolve(seq.body), fuser)
    blocks = (X.BindingBlock(tuple(bindings)),) if bindings else ()
    return X.SeqExpr(blocks, body)


def legalize_vm(mod: IRModule, target=None) -> IRModule:
    functions = dict(mod.functions)
    kernels = _Kernels(functions, Target(target) if target is not None else None)
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            body = _fuse_seq(func.body, kernels)
            functions[name] = X.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                         func.attrs)
    return mod.with_functions(functions)
