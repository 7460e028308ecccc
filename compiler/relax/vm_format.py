"""The Relax VM executable in memory: its function table, constant pool and instruction words,
and the one writer/reader of its bytes (Apache TVM 0.27's format, byte for byte; see
shared/reference/relax_vm_format.md).

    ex = VMExecutableBytes.from_bytes(data)   # strict parse; VMFormatError names what is wrong
    ex.to_bytes() == data
    print(ex.as_text())                        # bytecode listing
    print(ex.stats())

Layout (little-endian): u64 magic, str version "0.14", vec<FuncInfo>, (new magic only) the
memory-scope section, the tagged constant pool, vec<i64> instr_offset, vec<i64> instr_data.
Constants are held as Python values: numpy arrays (Tensor, tag 70), `ShapeTuple` (Shape, 69),
str (Str, 65), int (Int, 1), float (Float, 3), `DataType` (5).
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import List

import numpy as np

from microruntime.dtype import DataType
from microruntime.object import ShapeTuple

from ..ir.errors import CompilerError

MAGIC = 0xD225DE2F4214151E       # written since TVM 0.23: with the memory-scope section
MAGIC_NO_SCOPE = 0xD225DE2F4214151D
VERSION = "0.14"
TENSOR_MAGIC = 0xDD5E40F096B4A13F

TAG_INT, TAG_FLOAT, TAG_DATATYPE, TAG_STR, TAG_SHAPE, TAG_TENSOR = 1, 3, 5, 65, 69, 70
_TAG_NAMES = {TAG_INT: "Int", TAG_FLOAT: "Float", TAG_DATATYPE: "DataType", TAG_STR: "Str",
              TAG_SHAPE: "Shape", TAG_TENSOR: "Tensor"}

VALUE_BITS = 56
VALUE_MAX = (1 << (VALUE_BITS - 1)) - 1          # immediates hold ±(2^55 - 1)
VALUE_MIN = -VALUE_MAX
BEGIN_SPECIAL_REG = 1 << 54
VOID_REG = BEGIN_SPECIAL_REG
VM_STATE_REG = BEGIN_SPECIAL_REG + 1


class VMFormatError(CompilerError, ValueError):
    """Malformed executable bytes, or an executable that breaks the format's rules."""


class VMFuncKind(enum.IntEnum):
    PACKED_FUNC = 0
    VM_FUNC = 1
    VM_TIR_FUNC = 2


class Opcode(enum.IntEnum):
    CALL = 1
    RET = 2
    GOTO = 3
    IF = 4


class ArgKind(enum.IntEnum):
    REGISTER = 0
    IMMEDIATE = 1
    CONST_IDX = 2
    FUNC_IDX = 3


def make_arg(kind: int, value: int) -> int:
    """An argument word: kind in the top 8 bits, the value in the low 56 (two's complement)."""
    value = int(value)
    if not VALUE_MIN - 1 <= value <= VALUE_MAX:
        raise VMFormatError(f"argument value {value} does not fit in 56 bits")
    word = (int(kind) << VALUE_BITS) | (value & ((1 << VALUE_BITS) - 1))
    return word - (1 << 64) if word >= (1 << 63) else word


def split_arg(word: int):
    """(ArgKind-int, value) of an argument word."""
    word &= (1 << 64) - 1
    kind = (word >> VALUE_BITS) & 0xFF
    value = word & ((1 << VALUE_BITS) - 1)
    if value >> (VALUE_BITS - 1):
        value -= 1 << VALUE_BITS
    return kind, value


@dataclass
class VMFuncInfo:
    kind: int
    name: str
    start_instr: int = 0
    end_instr: int = 0
    num_args: int = -2
    register_file_size: int = 0
    param_names: List[str] = field(default_factory=list)


@dataclass
class Instruction:
    """One decoded instruction (Call: func_idx, dst, args; Ret: result; Goto: offset;
    If: cond, false_offset)."""
    op: int
    dst: int = 0
    func_idx: int = 0
    args: List[int] = field(default_factory=list)
    result: int = 0
    pc_offset: int = 0
    cond: int = 0
    false_offset: int = 0


class _Writer:
    def __init__(self):
        self.parts = []

    def u64(self, v):
        self.parts.append(struct.pack("<Q", v & ((1 << 64) - 1)))

    def i64(self, v):
        self.parts.append(struct.pack("<q", v))

    def i32(self, v):
        self.parts.append(struct.pack("<i", v))

    def str(self, s):
        data = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        self.u64(len(data))
        self.parts.append(data)

    def raw(self, b):
        self.parts.append(bytes(b))

    def getvalue(self):
        return b"".join(self.parts)


class _Reader:
    def __init__(self, data):
        self.data = memoryview(bytes(data))
        self.pos = 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.data):
            raise VMFormatError(f"truncated VM executable: {what} needs {n} bytes at offset "
                                f"{self.pos}, only {len(self.data) - self.pos} remain")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def u64(self, what):
        return self.unpack("<Q", what)

    def i64(self, what):
        return self.unpack("<q", what)

    def i32(self, what):
        return self.unpack("<i", what)

    def count(self, what, item_size):
        n = self.u64(what)
        if n * item_size > len(self.data) - self.pos:
            raise VMFormatError(f"truncated VM executable: {what} = {n} is more than the "
                                f"{len(self.data) - self.pos} bytes left can hold")
        return n

    def str(self, what):
        n = self.count(what + " length", 1)
        raw = bytes(self.take(n, what))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise VMFormatError(f"{what} is not valid UTF-8") from None


def _tensor_record(arr: np.ndarray, w: _Writer):
    arr = np.require(arr, requirements="C")
    dt = DataType(arr.dtype)
    w.u64(TENSOR_MAGIC)
    w.u64(0)
    w.i32(1)
    w.i32(0)
    w.i32(arr.ndim)
    w.raw(struct.pack("<BBH", dt.type_code, dt.bits, dt.lanes))
    for d in arr.shape:
        w.i64(d)
    data = arr.tobytes()
    w.i64(len(data))
    w.raw(data)


def _read_tensor(r: _Reader, where):
    magic = r.u64(f"{where}: tensor magic")
    if magic != TENSOR_MAGIC:
        raise VMFormatError(f"{where}: tensor record magic is {magic:#x}, expected "
                            f"{TENSOR_MAGIC:#x}")
    r.u64(f"{where}: reserved")
    dev_type = r.i32(f"{where}: device type")
    r.i32(f"{where}: device id")
    if dev_type != 1:
        raise VMFormatError(f"{where}: tensor constant on device type {dev_type}; only CPU (1) "
                            "is supported")
    ndim = r.i32(f"{where}: ndim")
    if not 0 <= ndim <= 64:
        raise VMFormatError(f"{where}: tensor ndim {ndim} out of range")
    code, bits, lanes = struct.unpack("<BBH", r.take(4, f"{where}: dtype"))
    shape = tuple(r.i64(f"{where}: shape") for _ in range(ndim))
    if any(d < 0 for d in shape):
        raise VMFormatError(f"{where}: negative tensor dimension in {shape}")
    nbytes = r.i64(f"{where}: nbytes")
    dt = DataType.from_code(code, bits, lanes)
    expected = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if nbytes != expected:
        raise VMFormatError(f"{where}: tensor of shape {shape} and dtype {dt} holds {expected} "
                            f"bytes, the record says {nbytes}")
    raw = bytes(r.take(nbytes, f"{where}: tensor data"))
    if lanes != 1:
        return np.frombuffer(raw, dtype=np.uint8).copy()  # kept as bytes; rare
    return np.frombuffer(raw, dtype=dt.numpy_dtype()).reshape(shape).copy()


def constant_tag(value) -> int:
    """The tag a constant is written with (TypeError for a value that is no constant)."""
    if isinstance(value, np.ndarray):
        return TAG_TENSOR
    if isinstance(value, DataType):
        return TAG_DATATYPE
    if isinstance(value, str):
        return TAG_STR
    if isinstance(value, (tuple, ShapeTuple)):
        return TAG_SHAPE
    if isinstance(value, (bool, np.bool_)):
        return TAG_INT
    if isinstance(value, (int, np.integer)):
        return TAG_INT
    if isinstance(value, (float, np.floating)):
        return TAG_FLOAT
    raise TypeError(f"a VM constant is a numpy array, shape tuple, str, int, float or DataType; "
                    f"got {type(value).__name__}")


def _fmt_arg(word, consts, funcs):
    kind, value = split_arg(word)
    if kind == ArgKind.REGISTER:
        if value == VOID_REG:
            return "%void"
        if value == VM_STATE_REG:
            return "%vm"
        return f"%{value}"
    if kind == ArgKind.IMMEDIATE:
        return f"i{value}"
    if kind == ArgKind.CONST_IDX:
        return f"c[{value}]"
    if kind == ArgKind.FUNC_IDX:
        name = funcs[value].name if 0 <= value < len(funcs) else "?"
        return f"f[{name}]"
    return f"?{kind}:{value}"


def _fmt_const(value):
    if isinstance(value, np.ndarray):
        return f"Tensor({list(value.shape)}, {DataType(value.dtype)})"
    if isinstance(value, DataType):
        return f"DataType({str.__str__(value)})"
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, tuple):
        return f"Shape({list(value)})"
    return repr(value)


@dataclass
class VMExecutableBytes:
    """A Relax VM executable held in memory (what `ExecBuilder.get()` returns)."""
    func_table: List[VMFuncInfo] = field(default_factory=list)
    constants: list = field(default_factory=list)
    instr_offset: List[int] = field(default_factory=list)
    instr_data: List[int] = field(default_factory=list)
    memory_scopes: list = field(default_factory=list)   # [(const_index, scope)]
    magic: int = MAGIC

    # ---- lookup ---------------------------------------------------------------------------
    @property
    def func_map(self):
        return {f.name: i for i, f in enumerate(self.func_table)}

    def get_instruction(self, pc: int) -> Instruction:
        if not 0 <= pc < len(self.instr_offset):
            raise VMFormatError(f"instruction {pc} out of range (0..{len(self.instr_offset)})")
        off = self.instr_offset[pc]
        d = self.instr_data
        op = d[off]
        if op == Opcode.CALL:
            n = d[off + 3]
            return Instruction(Opcode.CALL, dst=d[off + 1], func_idx=d[off + 2],
                               args=list(d[off + 4: off + 4 + n]))
        if op == Opcode.RET:
            return Instruction(Opcode.RET, result=d[off + 1])
        if op == Opcode.GOTO:
            return Instruction(Opcode.GOTO, pc_offset=d[off + 1])
        if op == Opcode.IF:
            return Instruction(Opcode.IF, cond=d[off + 1], false_offset=d[off + 2])
        raise VMFormatError(f"instruction {pc}: unknown opcode {op}")

    # ---- bytes ----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        w = _Writer()
        w.u64(self.magic)
        w.str(VERSION)
        w.u64(len(self.func_table))
        for f in self.func_table:
            w.i32(int(f.kind))
            w.str(f.name)
            w.i64(f.start_instr)
            w.i64(f.end_instr)
            w.i64(f.num_args)
            w.i64(f.register_file_size)
            w.u64(len(f.param_names))
            for p in f.param_names:
                w.str(p)
        if self.magic == MAGIC:
            w.u64(len(self.memory_scopes))
            for idx, scope in self.memory_scopes:
                w.i64(idx)
                w.str(scope)
        w.u64(len(self.constants))
        for i, c in enumerate(self.constants):
            try:
                tag = constant_tag(c)
            except TypeError as e:
                raise VMFormatError(f"constant {i}: {e}") from None
            w.i32(tag)
            if tag == TAG_TENSOR:
                _tensor_record(c, w)
            elif tag == TAG_SHAPE:
                w.u64(len(c))
                for d in c:
                    w.i64(int(d))
            elif tag == TAG_STR:
                w.str(str.__str__(c))
            elif tag == TAG_INT:
                w.i64(int(c))
            elif tag == TAG_FLOAT:
                w.raw(struct.pack("<d", float(c)))
            else:
                dt = DataType(c)
                w.raw(struct.pack("<BBH", dt.type_code, dt.bits, dt.lanes))
        w.u64(len(self.instr_offset))
        w.raw(struct.pack(f"<{len(self.instr_offset)}q", *self.instr_offset))
        w.u64(len(self.instr_data))
        w.raw(struct.pack(f"<{len(self.instr_data)}q", *self.instr_data))
        return w.getvalue()

    @classmethod
    def from_bytes(cls, data) -> "VMExecutableBytes":
        """Parses executable bytes strictly: every section must be complete, the magic, the
        version and every constant tag known, and nothing may follow the last section."""
        r = _Reader(data)
        magic = r.u64("magic")
        if magic not in (MAGIC, MAGIC_NO_SCOPE):
            raise VMFormatError(f"not a Relax VM executable: magic {magic:#x}, expected "
                                f"{MAGIC:#x} (or {MAGIC_NO_SCOPE:#x})")
        version = r.str("version")
        if version != VERSION:
            raise VMFormatError(f"VM executable version {version!r} is not supported (only "
                                f"{VERSION!r})")
        ex = cls(magic=magic)
        n = r.count("function count", 44)
        for i in range(n):
            kind = r.i32(f"function {i}: kind")
            name = r.str(f"function {i}: name")
            where = f"function {i} ({name!r})"
            if kind not in (0, 1, 2):
                raise VMFormatError(f"{where}: unknown function kind {kind}")
            start = r.i64(f"{where}: start_instr")
            end = r.i64(f"{where}: end_instr")
            nargs = r.i64(f"{where}: num_args")
            nreg = r.i64(f"{where}: register_file_size")
            np_ = r.count(f"{where}: param name count", 8)
            params = [r.str(f"{where}: param name") for _ in range(np_)]
            ex.func_table.append(VMFuncInfo(kind, name, start, end, nargs, nreg, params))
        if magic == MAGIC:
            ns = r.count("memory scope count", 16)
            for _ in range(ns):
                idx = r.i64("memory scope: constant index")
                ex.memory_scopes.append((idx, r.str("memory scope")))
        nc = r.count("constant count", 4)
        for i in range(nc):
            tag = r.i32(f"constant {i}: tag")
            where = f"constant {i}"
            if tag == TAG_TENSOR:
                ex.constants.append(_read_tensor(r, where))
            elif tag == TAG_SHAPE:
                nd = r.count(f"{where}: shape ndim", 8)
                ex.constants.append(ShapeTuple(r.i64(f"{where}: dim") for _ in range(nd)))
            elif tag == TAG_STR:
                ex.constants.append(r.str(f"{where}: string"))
            elif tag == TAG_INT:
                ex.constants.append(r.i64(f"{where}: int"))
            elif tag == TAG_FLOAT:
                ex.constants.append(r.unpack("<d", f"{where}: float"))
            elif tag == TAG_DATATYPE:
                code, bits, lanes = struct.unpack("<BBH", r.take(4, f"{where}: dtype"))
                ex.constants.append(DataType.from_code(code, bits, lanes))
            else:
                raise VMFormatError(
                    f"{where}: unknown constant tag {tag}; supported tags are "
                    + ", ".join(f"{t} ({n})" for t, n in _TAG_NAMES.items())
                    + " (TVM 0.22-0.27; executables from older TVM used other tags)")
        no = r.count("instr_offset count", 8)
        ex.instr_offset = list(struct.unpack(f"<{no}q", r.take(8 * no, "instr_offset")))
        nd = r.count("instr_data count", 8)
        ex.instr_data = list(struct.unpack(f"<{nd}q", r.take(8 * nd, "instr_data")))
        if r.pos != len(r.data):
            raise VMFormatError(f"{len(r.data) - r.pos} unexpected bytes after the VM executable")
        return ex

    # ---- text -----------------------------------------------------------------------------
    def as_text(self) -> str:
        lines = []
        for f in self.func_table:
            if f.kind == VMFuncKind.PACKED_FUNC:
                continue
            if f.kind == VMFuncKind.VM_TIR_FUNC:
                lines.append(f"@{f.name} num_inputs={f.num_args} [tir]\n")
                continue
            params = ", ".join(f.param_names)
            lines.append(f"@{f.name}({params}) num_inputs={f.num_args} "
                         f"registers={f.register_file_size}:")
            for pc in range(f.start_instr, f.end_instr):
                ins = self.get_instruction(pc)
                if ins.op == Opcode.CALL:
                    callee = (self.func_table[ins.func_idx].name
                              if 0 <= ins.func_idx < len(self.func_table) else "?")
                    args = ", ".join(_fmt_arg(a, self.constants, self.func_table)
                                     for a in ins.args)
                    dst = "%void" if ins.dst == VOID_REG else f"%{ins.dst}"
                    lines.append(f"  {pc:>4}  call  {callee:<32} in: {args:<28} dst: {dst}")
                elif ins.op == Opcode.RET:
                    lines.append(f"  {pc:>4}  ret   %{ins.result}")
                elif ins.op == Opcode.GOTO:
                    lines.append(f"  {pc:>4}  goto  {ins.pc_offset:+d}")
                else:
                    lines.append(f"  {pc:>4}  if    %{ins.cond}, {ins.false_offset:+d}")
            lines.append("")
        return "\n".join(lines)

    def stats(self) -> str:
        consts = ", ".join(_fmt_const(c) for c in self.constants)
        vm_funcs = [f.name for f in self.func_table if f.kind != VMFuncKind.PACKED_FUNC]
        packed = [f.name for f in self.func_table if f.kind == VMFuncKind.PACKED_FUNC]
        tensor_bytes = sum(c.nbytes for c in self.constants if isinstance(c, np.ndarray))
        return (
            "Relax VM executable statistics:\n"
            f"  Constant pool (# {len(self.constants)}, tensors {tensor_bytes} bytes): "
            f"[{consts}]\n"
            f"  Globals (#{len(vm_funcs)}): [{', '.join(vm_funcs)}]\n"
            f"  Packed functions (#{len(packed)}): [{', '.join(packed)}]\n"
            f"  Instructions: {len(self.instr_offset)} ({len(self.instr_data)} words)\n")

    def __str__(self):
        return self.as_text()

