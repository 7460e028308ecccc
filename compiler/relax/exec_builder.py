"""ExecBuilder: emits Relax VM bytecode into an executable (as `tvm.relax.exec_builder`).

    eb = ExecBuilder()
    with eb.function("main", num_inputs=2, param_names=["x", "y"]):
        eb.emit_call("add", args=[eb.r(0), eb.r(1)], dst=eb.r(2))
        eb.emit_ret(eb.r(2))
    ex = eb.get()              # VMExecutableBytes: to_bytes(), as_text(), stats()

Register numbers given to `emit_call(dst=...)` are names: `get()` renumbers the registers of each
function in order of first definition (after its inputs) and sets its register-file size, as
TVM's builder does. Argument words come from `r(i)`, `imm(v)`, `c(i)`, `f(name)`; a tuple of ints,
a numpy array, a microruntime NDArray or a DataType given as an argument becomes a constant.
"""
from __future__ import annotations

import enum
from typing import Dict, List, Optional

import numpy as np

from microruntime.dtype import DataType
from microruntime.object import ShapeTuple

from ..ir.dtype import DType
from . import vm_format as F
from .vm_format import ArgKind, Opcode, VMExecutableBytes, VMFormatError, VMFuncInfo, VMFuncKind

__all__ = ["ExecBuilder", "SpecialReg", "VMFuncKind", "VMFuncScope"]


class SpecialReg(enum.IntEnum):
    """Register numbers with a special meaning."""
    VOID_ARG = F.VOID_REG
    VM_STATE = F.VM_STATE_REG


class VMFuncScope:
    """The context manager `ExecBuilder.function` returns; leaving it ends the function."""
    stack: List["VMFuncScope"] = []

    def __init__(self, exit_callback):
        self.exit_callback = exit_callback

    def __enter__(self):
        VMFuncScope.stack.append(self)
        return self

    def __exit__(self, ptype, value, trace):
        VMFuncScope.stack.pop()
        self.exit_callback()


def _const_key(value):
    """A hashable key under which structurally equal constants coincide."""
    tag = F.constant_tag(value)
    if tag == F.TAG_TENSOR:
        return (tag, str(value.dtype), value.shape, value.tobytes())
    if tag == F.TAG_SHAPE:
        return (tag, tuple(int(x) for x in value))
    if tag == F.TAG_DATATYPE:
        return (tag, str.__str__(value))
    if tag == F.TAG_STR:
        return (tag, str.__str__(value))
    if tag == F.TAG_FLOAT:
        return (tag, float(value).hex())
    return (tag, int(value))


class ExecBuilder:
    """A builder that emits instructions and builds a VM executable."""

    def __init__(self) -> None:
        self._exec = VMExecutableBytes()
        self._func_map: Dict[str, int] = {}
        self._dedup: Dict[tuple, int] = {}
        self._open: Optional[str] = None

    # ---- argument words -------------------------------------------------------------------
    def r(self, idx: int) -> int:
        """An argument word naming register `idx`."""
        return F.make_arg(ArgKind.REGISTER, idx)

    def imm(self, value: int) -> int:
        """An argument word holding the immediate `value` (±(2^55-1))."""
        value = int(value)
        if not F.VALUE_MIN <= value <= F.VALUE_MAX:
            raise VMFormatError(f"immediate {value} is outside ±(2^55-1); use convert_constant")
        return F.make_arg(ArgKind.IMMEDIATE, value)

    def c(self, idx: int) -> int:
        """An argument word naming constant `idx`."""
        return F.make_arg(ArgKind.CONST_IDX, idx)

    def f(self, name: str) -> int:
        """An argument word naming the declared function `name`."""
        if name not in self._func_map:
            raise VMFormatError(f"cannot find function {name!r}: declare it first")
        return F.make_arg(ArgKind.FUNC_IDX, self._func_map[name])

    def void_arg(self) -> int:
        return self.r(SpecialReg.VOID_ARG)

    def void_register(self) -> int:
        return self.r(SpecialReg.VOID_ARG)

    def vm_state(self) -> int:
        return self.r(SpecialReg.VM_STATE)

    # ---- constants ------------------------------------------------------------------------
    def convert_constant(self, const: object) -> int:
        """Adds `const` to the constant pool (once per structurally equal value) and returns its
        argument word; ints within ±(2^55-1) become immediates."""
        value = const
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, (DataType, DType)):
            value = int(value)
            if F.VALUE_MIN <= value <= F.VALUE_MAX:
                return self.imm(value)
            if not -(1 << 63) <= value < (1 << 63):
                raise VMFormatError(f"constant {value} does not fit in int64")
        elif isinstance(value, (DataType, DType)):
            value = DataType(str.__str__(value))
        elif isinstance(value, str):
            value = str.__str__(value)
        elif isinstance(value, (tuple, list, ShapeTuple)):
            value = ShapeTuple(value)
        elif isinstance(value, (float, np.floating)):
            value = float(value)
        elif isinstance(value, np.ndarray):
            value = np.require(value, requirements="C")
        elif hasattr(value, "numpy") and hasattr(value, "shape"):
            value = np.require(value.numpy(), requirements="C")
        else:
            raise VMFormatError(
                f"cannot make a VM constant of {type(const).__name__}: use a numpy array or "
                "NDArray, a shape tuple, str, int, float or DataType")
        key = _const_key(value)
        idx = self._dedup.get(key)
        if idx is None:
            idx = len(self._exec.constants)
            self._exec.constants.append(value)
            self._dedup[key] = idx
        return self.c(idx)

    # ---- functions ------------------------------------------------------------------------
    def declare_function(self, func_name: str, kind: VMFuncKind = VMFuncKind.PACKED_FUNC) -> None:
        """Declares a function (packed by default) so that `f(name)` can name it."""
        idx = self._func_map.get(func_name)
        if idx is not None:
            if self._exec.func_table[idx].kind != kind:
                raise VMFormatError(f"function {func_name!r} is already declared as kind "
                                    f"{self._exec.func_table[idx].kind}, not {int(kind)}")
            return
        self._func_map[func_name] = len(self._exec.func_table)
        self._exec.func_table.append(VMFuncInfo(int(kind), func_name))

    def function(self, func_name: str, num_inputs: Optional[int] = 0,
                 param_names: Optional[List[str]] = None) -> VMFuncScope:
        """Starts a bytecode function; use as a context manager (leaving it ends it)."""
        if self._open is not None:
            raise VMFormatError(f"cannot start function {func_name!r} inside {self._open!r}")
        num_inputs = 0 if num_inputs is None else int(num_inputs)
        self.declare_function(func_name, VMFuncKind.VM_FUNC)
        info = self._exec.func_table[self._func_map[func_name]]
        if info.num_args != -2:
            raise VMFormatError(f"function {func_name!r} is already defined")
        if param_names is not None:
            param_names = [str(p) for p in param_names]
            if len(param_names) != num_inputs:
                raise VMFormatError(
                    f"function {func_name!r} is defined with {num_inputs} arguments but "
                    f"{len(param_names)} parameter names ({param_names})")
        else:
            param_names = []
        info.num_args = num_inputs
        info.param_names = param_names
        info.register_file_size = num_inputs
        info.start_instr = len(self._exec.instr_offset)
        self._open = func_name

        def end():
            info.end_instr = len(self._exec.instr_offset)
            self._open = None

        return VMFuncScope(end)

    def _check_scope(self) -> None:
        if self._open is None:
            raise VMFormatError("emit should happen in a function scope")

    # ---- instructions ---------------------------------------------------------------------
    def _push(self, words):
        self._exec.instr_offset.append(len(self._exec.instr_data))
        self._exec.instr_data.extend(int(w) for w in words)

    def emit_call(self, name: str, args=None, dst: Optional[int] = None) -> None:
        """Emits `dst = name(*args)`; `name` is declared as a packed function if it is new.
        `dst` is a register number or an `r(...)` word (None: the void register)."""
        self._check_scope()
        if dst is None:
            dst = SpecialReg.VOID_ARG
        kind, dst_value = F.split_arg(int(dst))
        if kind != ArgKind.REGISTER:
            raise VMFormatError(f"the destination of a call must be a register, not kind {kind}")
        words = []
        for arg in args or []:
            if isinstance(arg, (tuple, ShapeTuple, np.ndarray, DataType, DType)) or (
                    hasattr(arg, "numpy") and hasattr(arg, "shape")):
                words.append(self.convert_constant(arg))
            elif isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
                words.append(int(arg))
            else:
                raise VMFormatError(f"call to {name!r}: argument {arg!r} is no argument word "
                                    "(use r(), imm(), c() or f())")
        if name not in self._func_map:
            self.declare_function(name, VMFuncKind.PACKED_FUNC)
        self._push([Opcode.CALL, dst_value, self._func_map[name], len(words), *words])

    def emit_ret(self, result: int) -> None:
        """Emits a return of register `result` (an `r(...)` word)."""
        self._check_scope()
        kind, value = F.split_arg(int(result))
        if kind != ArgKind.REGISTER:
            raise VMFormatError("ret must return a register")
        self._push([Opcode.RET, value])

    def emit_goto(self, pc_offset: int) -> None:
        """Emits `pc += pc_offset`."""
        self._check_scope()
        if int(pc_offset) == 0:
            raise VMFormatError("goto with offset 0 loops forever")
        self._push([Opcode.GOTO, int(pc_offset)])

    def emit_if(self, cond: int, false_offset: int) -> None:
        """Emits: if register `cond` is non-zero go on, else `pc += false_offset`."""
        self._check_scope()
        kind, value = F.split_arg(int(cond))
        if kind != ArgKind.REGISTER:
            raise VMFormatError("the condition of if must be a register")
        if int(false_offset) <= 1:
            raise VMFormatError(f"if needs a false offset > 1, not {false_offset}")
        self._push([Opcode.IF, value, int(false_offset)])

    # ---- result ---------------------------------------------------------------------------
    def _formalize(self) -> None:
        ex = self._exec
        for info in ex.func_table:
            if info.kind != VMFuncKind.VM_FUNC:
                continue
            nin = info.num_args
            mapping: Dict[int, int] = {}
            nxt = nin

            def remap(v, nin=nin, mapping=mapping):
                if nin <= v < F.BEGIN_SPECIAL_REG and v in mapping:
                    return mapping[v]
                return v

            for pc in range(info.start_instr, info.end_instr):
                off = ex.instr_offset[pc]
                op = ex.instr_data[off]
                if op == Opcode.CALL:
                    n = ex.instr_data[off + 3]
                    for i in range(n):
                        kind, v = F.split_arg(ex.instr_data[off + 4 + i])
                        if kind == ArgKind.REGISTER:
                            ex.instr_data[off + 4 + i] = F.make_arg(kind, remap(v))
                    dst = ex.instr_data[off + 1]
                    if nin <= dst < F.BEGIN_SPECIAL_REG:
                        if dst not in mapping:
                            mapping[dst] = nxt
                            nxt += 1
                        ex.instr_data[off + 1] = mapping[dst]
                elif op in (Opcode.RET, Opcode.IF):
                    ex.instr_data[off + 1] = remap(ex.instr_data[off + 1])
            info.register_file_size = nxt

    def _check(self) -> None:
        ex = self._exec
        for info in ex.func_table:
            if info.kind != VMFuncKind.VM_FUNC:
                continue
            if info.end_instr <= info.start_instr:
                raise VMFormatError(f"function {info.name!r} has no instructions (or was never "
                                    "ended)")
            defined = set(range(info.num_args))
            for pc in range(info.start_instr, info.end_instr):
                ins = ex.get_instruction(pc)
                regs = []
                if ins.op == Opcode.CALL:
                    for a in ins.args:
                        kind, v = F.split_arg(a)
                        if kind == ArgKind.REGISTER:
                            regs.append(v)
                        elif kind == ArgKind.CONST_IDX and not 0 <= v < len(ex.constants):
                            raise VMFormatError(f"{info.name!r} pc {pc}: constant index {v} "
                                                f"exceeds the pool ({len(ex.constants)})")
                        elif kind == ArgKind.FUNC_IDX and not 0 <= v < len(ex.func_table):
                            raise VMFormatError(f"{info.name!r} pc {pc}: function index {v} "
                                                "exceeds the function table")
                elif ins.op == Opcode.RET:
                    regs.append(ins.result)
                elif ins.op == Opcode.IF:
                    regs.append(ins.cond)
                for v in regs:
                    if v < F.BEGIN_SPECIAL_REG and v not in defined:
                        raise VMFormatError(
                            f"register r({v}) in VM function {info.name!r} is used as input "
                            f"while it is never defined as a destination (pc {pc})")
                if ins.op == Opcode.CALL and ins.dst < F.BEGIN_SPECIAL_REG:
                    defined.add(ins.dst)
                target = None
                if ins.op == Opcode.GOTO:
                    target = pc + ins.pc_offset
                elif ins.op == Opcode.IF:
                    target = pc + ins.false_offset
                if target is not None and not info.start_instr <= target < info.end_instr:
                    raise VMFormatError(f"{info.name!r} pc {pc}: jump target {target} is "
                                        f"outside the function ({info.start_instr}.."
                                        f"{info.end_instr})")

    def get(self) -> VMExecutableBytes:
        """The executable (registers renumbered, every index checked)."""
        if self._open is not None:
            raise VMFormatError(f"function {self._open!r} was never ended")
        self._formalize()
        self._check()
        return self._exec
