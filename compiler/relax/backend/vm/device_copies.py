"""device_copies_vm: in a GPU build of the VM, every tensor is where its reader runs.

before: `legalize(mod, target=...)` ran for a GPU target: kernels run on the device, except
        those with attr HOST_FALLBACK (no store on a GPU thread: a 0-d result), which run on
        the host CPU.
after:  a value lives on the device (parameters, constants, device kernels' results, results
        of calls) or on the host (the results of host kernels, and items of them). A kernel
        reading a value of the other side reads a copy,
            xc = vm.builtin.to_device(x, device_type, 0)       (host: device type 1)
        bound just before its first use in the sequence (one copy per value and side); any
        other use of a host value (a tuple, a call, an If branch's or a function's result)
        reads its device copy, so functions return device tensors. An If condition is read
        where it is (vm.builtin.read_if_cond reads either side). For a CPU target the module
        is unchanged.
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

from microruntime.abi import DeviceType

from ....ir.module import IRModule
from ....target import Target
from ....tir.function import PrimFunc
from ... import expr as X
from ...functor import ExprMutator
from ...op import vm as vm_op
from ...transform.legalize_gpu import HOST_FALLBACK
from .plan_memory import uses_of

_HOST = int(DeviceType.CPU)


def _is_call_tir(v) -> bool:
    return isinstance(v, X.Call) and isinstance(v.op, X.Op) and v.op.name == "relax.call_tir"


class _Rename(ExprMutator):
    def __init__(self, remap):
        super().__init__()
        self.var_remap.update(remap)


class _Seq:
    """Copies of one sequence of bindings (an If branch sees the copies made before it)."""

    def __init__(self, pass_, copies: Dict[Tuple[int, int], X.Var]):
        self.p = pass_
        self.copies = dict(copies)
        self.out: List[X.Binding] = []

    def on(self, var: X.Var, dev: int) -> X.Var:
        """`var` as read on device type `dev` (a copy when it lives on the other side)."""
        here = _HOST if id(var) in self.p.host else self.p.device_type
        if here == dev:
            return var
        key = (id(var), dev)
        if key not in self.copies:
            c = X.Var(f"{var.name_hint}_{'host' if dev == _HOST else 'dev'}", var.struct_info)
            self.out.append(X.VarBinding(c, vm_op.call_builtin(
                "vm.builtin.to_device", (var, X.PrimValue(dev), X.PrimValue(0)),
                var.struct_info)))
            self.copies[key] = c
        return self.copies[key]

    def on_device(self, e: X.Expr) -> X.Expr:
        """`e` with every host variable it reads replaced by its device copy."""
        remap = {id(v): self.on(v, self.p.device_type) for v in uses_of(e)
                 if id(v) in self.p.host}
        return _Rename(remap).visit_expr(e) if remap else e

    def run(self, seq: X.SeqExpr) -> X.SeqExpr:
        p = self.p
        for block in seq.blocks:
            for b in block.bindings:
                v = b.value
                if _is_call_tir(v):
                    dev = _HOST if v.args[0].name_hint in p.host_kernels else p.device_type
                    args = tuple(self.on(a, dev) if isinstance(a, X.Var) else a
                                 for a in v.args[1].fields)
                    v = X.Call(v.op, (v.args[0], X.Tuple(args)) + tuple(v.args[2:]), v.attrs,
                               v.sinfo_args)
                    if dev == _HOST:
                        p.host.add(id(b.var))
                elif isinstance(v, X.If):
                    v = X.If(v.cond, _Seq(p, self.copies).run(v.true_branch),
                             _Seq(p, self.copies).run(v.false_branch))
                elif (isinstance(v, X.TupleGetItem) and isinstance(v.tuple_value, X.Var)
                      and id(v.tuple_value) in p.host):
                    p.host.add(id(b.var))
                else:
                    v = self.on_device(v)
                self.out.append(X.MatchCast(b.var, v, b.struct_info)
                                if isinstance(b, X.MatchCast) else X.VarBinding(b.var, v))
        body = self.on_device(seq.body)
        blocks = (X.BindingBlock(tuple(self.out)),) if self.out else ()
        return X.SeqExpr(blocks, body)


class _Pass:
    def __init__(self, mod: IRModule, device_type: int):
        self.device_type = device_type
        self.host_kernels: Set[str] = {n for n, f in mod.items() if isinstance(f, PrimFunc)
                                       and f.attrs.get(HOST_FALLBACK)}
        self.host: Set[int] = set()


def device_copies_vm(mod: IRModule, target=None) -> IRModule:
    if target is None or Target(target).kind.is_host:
        return mod
    p = _Pass(mod, int(Target(target).device_type))
    functions = dict(mod.functions)
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            body = _Seq(p, {}).run(func.body)
            functions[name] = X.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                         func.attrs)
    return mod.with_functions(functions)


__all__ = ["device_copies_vm"]
