"""The VM back end: lowered graph-level functions → Relax VM bytecode, through ExecBuilder only.

Input: a module after the graph pipeline and the VM passes (device_copies_vm, plan_memory_vm,
lower_shapes_vm): every binding is a call of a kernel or shape function (a PrimFunc, by name),
of a runtime builtin (`ExternFunc`, or `call_builtin_with_ctx` which passes the VM first), of
another graph-level function, a closure operation, a kill, a tuple, a tuple item, an If, or an
alias. Output: one bytecode function per graph-level function (parameters in registers
0..n-1), as TVM's CodeGenVM lays them out:
- a binding gets a fresh register (an alias or a constant is copied into one with
  `vm.builtin.copy`); a call whose result is void (`R.Tuple()`) writes the void register;
- `kill_object(x)` writes `vm.builtin.null_value()` into x's register;
- an If reads its condition with `vm.builtin.read_if_cond`, then `If cond, +T+2`, the true
  branch (its result copied into a merge register), `Goto +F+1`, the false branch (copied into
  the same register);
- tuples are `vm.builtin.make_tuple`, items `vm.builtin.tuple_getitem`, closures
  `vm.builtin.make_closure(f, captures...)` / `vm.builtin.invoke_closure(vm, c, args...)`;
- constants: tensors, static shapes, strings, dtypes and floats go to the constant pool, ints
  are immediates.
"""
from __future__ import annotations

from typing import Dict, List

from microruntime.dtype import DataType

from ....ir.errors import InternalError, UnsupportedOpError
from ....ir.module import IRModule
from ....tir.function import PrimFunc
from ... import expr as X
from ...exec_builder import ExecBuilder, VMFuncKind
from ...struct_info import TupleStructInfo
from ...vm_format import VALUE_MAX, ArgKind, split_arg


def _is_void(s) -> bool:
    return isinstance(s, TupleStructInfo) and not s.fields


class _FunctionGen:
    """Instructions of one function, buffered so that jumps know their offsets."""

    def __init__(self, eb: ExecBuilder, mod: IRModule, func: X.Function, name: str = ""):
        self.eb, self.mod, self.func, self.name = eb, mod, func, name
        self.regs: Dict[int, int] = {}
        self.next_reg = len(func.params)
        self.code: List[tuple] = []
        for i, p in enumerate(func.params):
            self.regs[id(p)] = eb.r(i)

    def new_reg(self) -> int:
        r = self.eb.r(self.next_reg)
        self.next_reg += 1
        return r

    def call(self, name: str, args, dst=None) -> None:
        self.code.append(("call", name, list(args), dst))

    def ensure_reg(self, arg: int) -> int:
        if split_arg(arg)[0] == ArgKind.REGISTER:
            return arg
        dst = self.new_reg()
        self.call("vm.builtin.copy", [arg], dst)
        return dst

    # ---- expressions -------------------------------------------------------------------
    def expr(self, e: X.Expr, void: bool = False, tail: bool = False) -> int:
        """The register (or constant/immediate argument) holding `e`'s value; `tail`: the value
        is what the function returns (a call of the function itself then becomes a jump)."""
        eb = self.eb
        if isinstance(e, X.Var):
            reg = self.regs.get(id(e))
            if reg is None:
                raise InternalError(f"VM codegen: variable {e.name_hint!r} is used before it "
                                    "is defined")
            return reg
        if isinstance(e, X.Constant):
            return eb.convert_constant(e.data)
        if isinstance(e, X.ShapeExpr):
            if not all(isinstance(d, int) for d in e.values):
                raise InternalError(f"VM codegen: symbolic shape {e.values} left after "
                                    "lower_shapes_vm")
            return eb.convert_constant(tuple(e.values))
        if isinstance(e, X.PrimValue):
            v = e.value
            if isinstance(v, bool):
                return eb.imm(int(v))
            if isinstance(v, int):
                return eb.imm(v) if -VALUE_MAX <= v <= VALUE_MAX else eb.convert_constant(v)
            if isinstance(v, float):
                return eb.convert_constant(float(v))
            raise UnsupportedOpError(f"VM codegen: the scalar {v} is symbolic; the VM passes "
                                     "only lower symbolic dims of shapes")
        if isinstance(e, X.StringImm):
            return eb.convert_constant(e.value)
        if isinstance(e, X.DataTypeImm):
            return eb.convert_constant(DataType(e.value))
        if isinstance(e, X.GlobalVar):
            if isinstance(self.mod.functions.get(e.name_hint), X.Function):
                return eb.f(e.name_hint)
            raise UnsupportedOpError(f"VM codegen: kernel {e.name_hint} used as a value")
        if isinstance(e, X.Tuple):
            args = [self.expr(f) for f in e.fields]
            dst = self.new_reg()
            self.call("vm.builtin.make_tuple", args, dst)
            return dst
        if isinstance(e, X.TupleGetItem):
            t = self.expr(e.tuple_value)
            dst = self.new_reg()
            self.call("vm.builtin.tuple_getitem", [t, eb.imm(e.index)], dst)
            return dst
        if isinstance(e, X.Call):
            if tail and isinstance(e.op, X.GlobalVar) and e.op.name_hint == self.name:
                return self.tail_call(e)
            return self.call_expr(e, void)
        if isinstance(e, X.If):
            return self.if_expr(e, tail)
        if isinstance(e, X.SeqExpr):
            return self.seq(e, tail)
        raise UnsupportedOpError(f"VM codegen: cannot emit {type(e).__name__} ({e!r})")

    def call_expr(self, e: X.Call, void: bool) -> int:
        eb = self.eb
        op = e.op
        if isinstance(op, X.Op):
            name = op.name
            if name == "relax.null_value":
                return eb.void_register()
            if name == "relax.vm.kill_object":
                reg = self.expr(e.args[0])
                self.call("vm.builtin.null_value", [], reg)
                return eb.void_register()
            dst = eb.void_register() if void else self.new_reg()
            if name == "relax.call_builtin_with_ctx":
                args = [eb.vm_state()] + [self.expr(a) for a in e.args[1].fields]
                self.call(e.args[0].global_symbol, args, dst)
            elif name == "relax.make_closure":
                args = [eb.f(e.args[0].name_hint)] + [self.expr(a) for a in e.args[1].fields]
                self.call("vm.builtin.make_closure", args, dst)
            elif name == "relax.invoke_closure":
                args = [eb.vm_state(), self.expr(e.args[0])]
                args += [self.expr(a) for a in e.args[1].fields]
                self.call("vm.builtin.invoke_closure", args, dst)
            elif name == "relax.shape_of":
                self.call("vm.builtin.shape_of", [self.expr(e.args[0])], dst)
            else:
                raise UnsupportedOpError(f"VM codegen: operator {name} is still here; it has no "
                                         "kernel in the operator library")
            return dst
        dst = self.eb.void_register() if void else self.new_reg()
        args = [self.expr(a) for a in e.args]
        if isinstance(op, X.ExternFunc):
            self.call(op.global_symbol, args, dst)
        elif isinstance(op, X.GlobalVar):
            self.call(op.name_hint, args, dst)
        else:
            self.call("vm.builtin.invoke_closure", [eb.vm_state(), self.expr(op)] + args, dst)
        return dst

    def tail_call(self, e: X.Call) -> int:
        """A call of this function whose result it returns: the arguments become the
        parameters (through fresh registers, as one may read another's parameter) and control
        goes back to the first instruction, so a loop written as recursion (an ONNX Loop) runs
        any number of iterations in one frame."""
        args = [self.expr(a) for a in e.args]
        temps = []
        for a in args:
            t = self.new_reg()
            self.call("vm.builtin.copy", [a], t)
            temps.append(t)
        for i, t in enumerate(temps):
            self.call("vm.builtin.copy", [t], self.eb.r(i))
        self.code.append(("restart",))
        return self.eb.void_register()

    def if_expr(self, e: X.If, tail: bool = False) -> int:
        cond = self.expr(e.cond)
        cond_reg = self.new_reg()
        self.call("vm.builtin.read_if_cond", [cond], cond_reg)
        merge = self.new_reg()
        outer = self.code
        self.code = []
        self.call("vm.builtin.copy", [self.expr(e.true_branch, tail=tail)], merge)
        true_code = self.code
        self.code = []
        self.call("vm.builtin.copy", [self.expr(e.false_branch, tail=tail)], merge)
        false_code = self.code
        self.code = outer
        self.code.append(("if", cond_reg, len(true_code) + 2))
        self.code.extend(true_code)
        self.code.append(("goto", len(false_code) + 1))
        self.code.extend(false_code)
        return merge

    def seq(self, e: X.SeqExpr, tail: bool = False) -> int:
        bindings = [b for block in e.blocks for b in block.bindings]
        last = _tail_binding(e) if tail else None
        for b in bindings:
            if isinstance(b, X.MatchCast):
                raise InternalError("VM codegen: match_cast left after lower_shapes_vm")
            value = b.value
            arg = self.expr(value, void=_is_void(b.var.struct_info), tail=b is last)
            if isinstance(value, (X.Var, X.Constant, X.ShapeExpr, X.PrimValue,
                                  X.StringImm, X.DataTypeImm, X.GlobalVar)):
                dst = self.new_reg()
                self.call("vm.builtin.copy", [arg], dst)
                arg = dst
            self.regs[id(b.var)] = arg
        return self.expr(e.body, tail=tail)

    def emit(self, name: str) -> None:
        ret = self.ensure_reg(self.expr(self.func.body, tail=True))
        self.code.append(("ret", ret))
        eb = self.eb
        params = [p.name_hint for p in self.func.params]
        with eb.function(name, num_inputs=len(params), param_names=params):
            for pc, ins in enumerate(self.code):
                if ins[0] == "call":
                    eb.emit_call(ins[1], ins[2], ins[3])
                elif ins[0] == "if":
                    eb.emit_if(ins[1], ins[2])
                elif ins[0] == "goto":
                    eb.emit_goto(ins[1])
                elif ins[0] == "restart":
                    eb.emit_goto(-pc)
                else:
                    eb.emit_ret(ins[1])


def _tail_binding(seq: X.SeqExpr):
    """The binding of `seq` whose value the sequence returns, when only kills follow it (they
    release registers a jump leaves behind anyway); else None."""
    bindings = [b for block in seq.blocks for b in block.bindings]
    for i in range(len(bindings) - 1, -1, -1):
        b = bindings[i]
        if b.var is seq.body:
            return b
        v = b.value
        if not (isinstance(v, X.Call) and isinstance(v.op, X.Op)
                and v.op.name == "relax.vm.kill_object"):
            return None
    return None


def codegen(mod: IRModule, eb: ExecBuilder = None):
    """The executable (VMExecutableBytes) of every graph-level function of `mod`."""
    eb = eb or ExecBuilder()
    funcs = [(name, f) for name, f in mod.items()
             if isinstance(f, X.Function) and not f.attrs.get("Primitive")]
    for name, _ in funcs:
        eb.declare_function(name, VMFuncKind.VM_FUNC)
    for name, func in mod.items():
        if isinstance(func, PrimFunc):
            eb.declare_function(name, VMFuncKind.PACKED_FUNC)
    for name, func in funcs:
        _FunctionGen(eb, mod, func, name).emit(name)
    return eb.get()
