"""plan_memory_vm: kernel calls in destination-passing style over planned storage, values killed
after their last use (the VM's memory plan, per function, symbolic sizes included).

before: the graph pipeline ran (compiler/relax/pipeline.py): kernels are
        `v = R.call_tir(k, (args...), out_sinfo)`.
after:  each such binding is
            s = call_builtin_with_ctx("vm.builtin.alloc_storage",
                                      (R.shape([nbytes]), 0, "uint8", "global"))   (when new)
            v = vm.builtin.alloc_tensor(s, 0, R.shape(out_shape), dtype)
            _ = k(args..., v)
        (a tuple-valued out_sinfo allocates each output and binds `v = (o0, o1, ...)`).
        Storage is planned per sequence of bindings (a function body, an If branch): an output
        takes a free storage that provably holds it — in an If branch, also one of the
        enclosing sequences' storages that is free where the If is (its last tensor died
        before it; the branch's temporaries live and die inside the branch, and the storage
        is killed after the If, no sooner) (static sizes: the smallest that fits, else
        the largest free one, grown to fit; symbolic sizes: one whose size is provably at least
        the need) or a new one allocated where it is first used. A tensor's storage is free
        again after its last use only when every use is as a kernel argument (a tensor that is
        returned, put in a tuple, passed to a function or a closure keeps its storage).
        After the last use of a value bound in the sequence (not the sequence's result), its
        register is killed (`relax.vm.kill_object`), and so is a storage's after its last
        tensor's, so memory is released as early as the plan allows. In a GPU build, the
        outputs of host kernels (attr HOST_FALLBACK) get storage of their own on the host
        (device index -1, the VM's last device); the others are on device 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ....arith import Analyzer
from ....ir.dtype import as_dtype
from ....ir.module import IRModule
from ... import expr as X
from ... import shape_util
from ...functor import ExprVisitor
from ...op import vm as vm_op
from ...struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo
from ...transform.legalize_gpu import HOST_FALLBACK

HOST_INDEX = -1  # alloc_storage's device index of the host (the VM's last device)


def _nbytes(s: TensorStructInfo):
    dt = as_dtype(s.dtype)
    return shape_util.mul(shape_util.product(s.shape), (dt.bits * dt.lanes + 7) // 8)


def _fits(have, need) -> bool:
    if isinstance(have, int) and isinstance(need, int):
        return have >= need
    if shape_util.equal(have, need):
        return True
    return Analyzer().can_prove(shape_util.dim_expr(have) >= shape_util.dim_expr(need))


class _Uses(ExprVisitor):
    def __init__(self):
        self.vars: List[X.Var] = []

    def visit_var_(self, v: X.Var) -> None:
        self.vars.append(v)

    visit_dataflow_var_ = visit_var_


def uses_of(e) -> List[X.Var]:
    """The variables an expression (or binding) reads."""
    u = _Uses()
    if isinstance(e, X.Binding):
        u.visit_expr(e.value)
    else:
        u.visit_expr(e)
    return u.vars


def _is_call_tir(v: X.Expr) -> bool:
    return isinstance(v, X.Call) and isinstance(v.op, X.Op) and v.op.name == "relax.call_tir"


@dataclass
class _Token:
    size: object                       # bytes: an int or a PrimExpr
    first: int                         # binding index of its first tensor
    last_use: int = -1                 # last binding index any of its tensors is used at
    var: Optional[X.Var] = None
    users: List[int] = field(default_factory=list)
    device: int = 0                    # alloc_storage's device index


def _take(free: List[_Token], need, device: int) -> Optional[_Token]:
    """Removes from `free` and returns a storage on `device` for `need` bytes: the smallest
    that provably holds it (static sizes first), else the largest static one, grown (its
    allocation, emitted once planning is done, has the final size); None when none will do."""
    mine = [t for t in free if t.device == device]
    fits = [t for t in mine if _fits(t.size, need)]
    tok = None
    if fits:
        ints = [t for t in fits if isinstance(t.size, int)]
        tok = min(ints, key=lambda t: t.size) if ints else fits[0]
    elif isinstance(need, int):
        grow = [t for t in mine if isinstance(t.size, int)]
        if grow:
            tok = max(grow, key=lambda t: t.size)
            tok.size = need
    if tok is not None:
        free.remove(tok)
    return tok


def _plan_seq(seq: X.SeqExpr, host_kernels: Set[str],
              inherited: Sequence[_Token] = ()) -> Tuple[X.SeqExpr, Set[int]]:
    """`seq` planned, and the ids of the `inherited` storages (free in the enclosing sequence
    where `seq`, an If branch, runs; allocated and killed there) that it used."""
    bindings = [b for block in seq.blocks for b in block.bindings]
    body_uses = {id(v) for v in uses_of(seq.body)}
    last: Dict[int, int] = {}
    kernel_only: Dict[int, bool] = {}
    for i, b in enumerate(bindings):
        if _is_call_tir(b.value):
            used = [v for a in b.value.args[1].fields for v in uses_of(a)]
            direct = {id(a) for a in b.value.args[1].fields if isinstance(a, X.Var)}
            for v in used:
                if id(v) not in direct:
                    kernel_only[id(v)] = False
            rest = uses_of(X.Tuple(b.value.args[2:])) if len(b.value.args) > 2 else []
            for v in rest:
                kernel_only[id(v)] = False
        else:
            used = uses_of(b)
            for v in used:
                kernel_only[id(v)] = False
        for v in used:
            last[id(v)] = i

    # ---- plan: a token per output tensor --------------------------------------------------
    tokens: List[_Token] = []
    token_of: Dict[int, _Token] = {}    # id(var) -> token, for single-output kernel results
    free: List[_Token] = list(inherited)
    used_inherited: Set[int] = set()
    outs_at: Dict[int, List[_Token]] = {}
    branches: Dict[int, X.If] = {}
    for i, b in enumerate(bindings):
        if isinstance(b.value, X.If):
            # the branches run here: they may take the storages free now (and grow them)
            v = b.value
            true_branch, t_used = _plan_seq(v.true_branch, host_kernels, free)
            false_branch, f_used = _plan_seq(v.false_branch, host_kernels, free)
            branches[i] = X.If(v.cond, true_branch, false_branch)
            for t in free:
                if id(t) in t_used | f_used:
                    t.last_use = max(t.last_use, i)
                    t.users.append(i)
            used_inherited |= {id(t) for t in inherited} & (t_used | f_used)
            continue
        if not _is_call_tir(b.value):
            continue
        out = b.value.sinfo_args[0]
        outs = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
        device = HOST_INDEX if b.value.args[0].name_hint in host_kernels else 0
        plannable = (not isinstance(out, TupleStructInfo) and kernel_only.get(id(b.var), True)
                     and id(b.var) not in body_uses)
        chosen = []
        for s in outs:
            need = _nbytes(s)
            tok = _take(free, need, device) if plannable else None
            if tok is None:
                tok = _Token(need, i, device=device, var=X.Var("storage", ObjectStructInfo()))
                tokens.append(tok)
            elif id(tok) in {id(t) for t in inherited}:
                used_inherited.add(id(tok))
            tok.users.append(i)
            chosen.append(tok)
        outs_at[i] = chosen
        if plannable:
            token_of[id(b.var)] = chosen[0]
        # inputs whose last use is this call free their storage (after the outputs were taken)
        for a in b.value.args[1].fields:
            t = token_of.get(id(a)) if isinstance(a, X.Var) else None
            if t is not None and last.get(id(a)) == i and t not in free:
                free.append(t)
        if plannable and id(b.var) not in last and chosen[0] not in free:
            free.append(chosen[0])  # never read: its storage is free at once
    for i, b in enumerate(bindings):
        if _is_call_tir(b.value):
            for t in outs_at[i]:
                t.last_use = max(t.last_use, last.get(id(b.var), i), i)
        else:
            for v in uses_of(b):
                t = token_of.get(id(v))
                if t is not None:
                    t.last_use = max(t.last_use, i)
    # a token holding a value that escapes is never killed
    escaping: Set[int] = set()
    for i, b in enumerate(bindings):
        if _is_call_tir(b.value) and id(b.var) not in token_of:
            escaping.update(id(t) for t in outs_at[i])

    # ---- emit ---------------------------------------------------------------------------
    new: List[X.Binding] = []
    defined: Set[int] = set()
    kills_after: Dict[int, List[X.Var]] = {}
    for i, b in enumerate(bindings):
        defined.add(id(b.var))
        if id(b.var) not in body_uses:
            at = last.get(id(b.var), i)
            kills_after.setdefault(at, []).append(b.var)
    storage_kills: Dict[int, List[_Token]] = {}
    for t in tokens:
        if id(t) not in escaping:
            storage_kills.setdefault(t.last_use, []).append(t)
    allocated: Set[int] = {id(t) for t in inherited}
    for i, b in enumerate(bindings):
        v = b.value
        if i in branches:
            v = branches[i]
            b = X.VarBinding(b.var, v) if isinstance(b, X.VarBinding) else b
        if not _is_call_tir(v):
            new.append(b)
        else:
            out = v.sinfo_args[0]
            outs = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
            tensors = []
            for k, (s, t) in enumerate(zip(outs, outs_at[i])):
                if id(t) not in allocated:
                    allocated.add(id(t))
                    new.append(X.VarBinding(t.var, vm_op.call_builtin_with_ctx(
                        "vm.builtin.alloc_storage",
                        (X.ShapeExpr((t.size,)), X.PrimValue(t.device), X.DataTypeImm("uint8"),
                         X.StringImm("global")))))
                tv = b.var if len(outs) == 1 and not isinstance(out, TupleStructInfo) else \
                    X.Var(f"{b.var.name_hint}_{k}", s)
                new.append(X.VarBinding(tv, vm_op.call_builtin(
                    "vm.builtin.alloc_tensor",
                    (t.var, X.PrimValue(0), X.ShapeExpr(s.shape), X.DataTypeImm(s.dtype)), s)))
                tensors.append(tv)
            new.append(X.VarBinding(X.Var("_", vm_op.VOID), X.Call(
                v.args[0], tuple(v.args[1].fields) + tuple(tensors), None, (vm_op.VOID,))))
            if isinstance(out, TupleStructInfo):
                new.append(X.VarBinding(b.var, X.Tuple(tuple(tensors))))
        for var in kills_after.get(i, ()):
            new.append(X.VarBinding(X.Var("_", vm_op.VOID), vm_op.kill_object(var)))
        for t in storage_kills.get(i, ()):
            new.append(X.VarBinding(X.Var("_", vm_op.VOID), vm_op.kill_object(t.var)))
    blocks = (X.BindingBlock(tuple(new)),) if new else ()
    return X.SeqExpr(blocks, seq.body), used_inherited


def storage_bytes(func: X.Function) -> list:
    """The sizes (bytes: ints or PrimExprs) of the storages `func` allocates (after this pass),
    for reports and tests."""
    sizes = []

    class _V(ExprVisitor):
        def visit_call_(self, e):
            if (isinstance(e.op, X.Op) and e.op.name == "relax.call_builtin_with_ctx"
                    and e.args[0].global_symbol == "vm.builtin.alloc_storage"):
                sizes.append(e.args[1].fields[0].struct_info.values[0])
            super().visit_call_(e)
    _V().visit_expr(func)
    return sizes


def plan_memory_vm(mod: IRModule) -> IRModule:
    functions = dict(mod.functions)
    host_kernels = {n for n, f in mod.items() if getattr(f, "attrs", {}).get(HOST_FALLBACK)}
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            body, _ = _plan_seq(func.body, host_kernels)
            functions[name] = X.Function(func.params, body, func.ret_struct_info,
                                         func.is_pure, func.attrs)
    return mod.with_functions(functions)


__all__ = ["plan_memory_vm", "storage_bytes", "uses_of"]
