"""A small SPIR-V module builder: instructions as 32-bit words, in the section order the
specification requires (capabilities, extensions, imports, memory model, entry points,
execution modes, names, decorations, types/constants/globals, functions).

Types and constants are made once each (`type_int(32, True)` twice gives one id). The builder
knows nothing of the IR; compiler/codegen/spirv/codegen.py drives it. The numbers below are
those of the SPIR-V 1.3 specification and the GLSL.std.450 extended instruction set.
"""
from __future__ import annotations

import struct
from typing import Dict, List, Sequence, Tuple

MAGIC = 0x07230203
VERSION = 0x00010300      # SPIR-V 1.3: StorageBuffer is core (Vulkan 1.1)
GENERATOR = 0             # no registered generator id

# ---- opcodes ----------------------------------------------------------------------------------
OP = dict(
    Name=5, MemberName=6, Extension=10, ExtInstImport=11, ExtInst=12, MemoryModel=14,
    EntryPoint=15, ExecutionMode=16, Capability=17, TypeVoid=19, TypeBool=20, TypeInt=21,
    TypeFloat=22, TypeVector=23, TypeArray=28, TypeRuntimeArray=29, TypeStruct=30,
    TypePointer=32, TypeFunction=33, ConstantTrue=41, ConstantFalse=42, Constant=43,
    Function=54, FunctionEnd=56, Variable=59, Load=61, Store=62, AccessChain=65, Decorate=71,
    MemberDecorate=72, CompositeExtract=81, ConvertFToU=109, ConvertFToS=110,
    ConvertSToF=111, ConvertUToF=112, UConvert=113, SConvert=114, FConvert=115, Bitcast=124,
    SNegate=126, FNegate=127, IAdd=128, FAdd=129, ISub=130, FSub=131, IMul=132, FMul=133,
    UDiv=134, SDiv=135, FDiv=136, UMod=137, SRem=138, SMod=139, FRem=140, FMod=141,
    IsNan=156, IsInf=157, LogicalEqual=164, LogicalNotEqual=165, LogicalOr=166,
    LogicalAnd=167, LogicalNot=168, Select=169, IEqual=170, INotEqual=171, UGreaterThan=172,
    SGreaterThan=173, UGreaterThanEqual=174, SGreaterThanEqual=175, ULessThan=176,
    SLessThan=177, ULessThanEqual=178, SLessThanEqual=179, FOrdEqual=180, FOrdNotEqual=182,
    FUnordNotEqual=183, FOrdLessThan=184, FOrdGreaterThan=186, FOrdLessThanEqual=188,
    FOrdGreaterThanEqual=190, ShiftRightLogical=194, ShiftRightArithmetic=195,
    ShiftLeftLogical=196, BitwiseOr=197, BitwiseXor=198, BitwiseAnd=199, Not=200,
    ControlBarrier=224, MemoryBarrier=225, Phi=245, LoopMerge=246, SelectionMerge=247,
    Label=248, Branch=249, BranchConditional=250, Return=253,
)
OPNAME = {v: k for k, v in OP.items()}

# ---- enumerants -------------------------------------------------------------------------------
CAP = dict(Shader=1, Float16=9, Float64=10, Int64=11, Int16=22, Int8=39,
           StorageBuffer16BitAccess=4433, StorageBuffer8BitAccess=4448)
STORAGE = dict(Input=1, Uniform=2, Workgroup=4, Private=6, Function=7, PushConstant=9,
               StorageBuffer=12)
DECORATION = dict(Block=2, ArrayStride=6, BuiltIn=11, Binding=33, DescriptorSet=34, Offset=35)
BUILTIN = dict(NumWorkgroups=24, WorkgroupId=26, LocalInvocationId=27, GlobalInvocationId=28)
EXEC_MODEL_GLCOMPUTE = 5
EXEC_MODE_LOCAL_SIZE = 17
ADDRESSING_LOGICAL = 0
MEMORY_MODEL_GLSL450 = 1
SCOPE_WORKGROUP = 2
SEMANTICS_ACQ_REL = 0x8
SEMANTICS_WORKGROUP_MEMORY = 0x100
SEMANTICS_UNIFORM_MEMORY = 0x40

# GLSL.std.450 instruction numbers
GLSL = dict(Round=1, RoundEven=2, Trunc=3, FAbs=4, SAbs=5, Floor=8, Ceil=9, Sin=13, Cos=14,
            Tan=15, Asin=16, Acos=17, Atan=18, Sinh=19, Cosh=20, Tanh=21, Asinh=22, Acosh=23,
            Atanh=24, Atan2=25, Pow=26, Exp=27, Log=28, Exp2=29, Log2=30, Sqrt=31,
            InverseSqrt=32, FMin=37, UMin=38, SMin=39, FMax=40, UMax=41, SMax=42, FClamp=43,
            Fma=50)


def string_words(text: str) -> List[int]:
    """A literal string: UTF-8, NUL-terminated, padded with NULs to whole words."""
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def instruction(opcode: int, operands: Sequence[int]) -> List[int]:
    count = len(operands) + 1
    if count > 0xFFFF:
        raise ValueError("a SPIR-V instruction has at most 65535 words")
    return [(count << 16) | opcode, *operands]


class Builder:
    """One SPIR-V module under construction; `words()` gives the finished binary."""

    def __init__(self) -> None:
        self.next_id = 1
        self.capabilities: List[int] = [CAP["Shader"]]
        self.extensions: List[str] = []
        self.imports: List[int] = []
        self.entry_points: List[int] = []
        self.exec_modes: List[int] = []
        self.names: List[int] = []
        self.decorations: List[int] = []
        self.globals: List[int] = []     # types, constants, global variables
        self.functions: List[int] = []
        self._types: Dict[Tuple, int] = {}
        self._consts: Dict[Tuple, int] = {}
        self.glsl = self.new_id()
        self.imports += instruction(OP["ExtInstImport"], [self.glsl, *string_words(
            "GLSL.std.450")])

    # ---- ids and sections --------------------------------------------------------------------
    def new_id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def require(self, cap: str) -> None:
        if CAP[cap] not in self.capabilities:
            self.capabilities.append(CAP[cap])

    def extension(self, name: str) -> None:
        if name not in self.extensions:
            self.extensions.append(name)

    def name(self, target: int, text: str) -> None:
        self.names += instruction(OP["Name"], [target, *string_words(text)])

    def decorate(self, target: int, decoration: str, *values: int) -> None:
        self.decorations += instruction(OP["Decorate"], [target, DECORATION[decoration],
                                                         *values])

    def member_decorate(self, target: int, member: int, decoration: str, *values: int) -> None:
        self.decorations += instruction(OP["MemberDecorate"], [target, member,
                                                               DECORATION[decoration], *values])

    def emit(self, opcode: str, *operands: int) -> None:
        """An instruction of the current function."""
        self.functions += instruction(OP[opcode], list(operands))

    def value(self, opcode: str, type_id: int, *operands: int) -> int:
        """An instruction of the current function with a result: its id."""
        rid = self.new_id()
        self.emit(opcode, type_id, rid, *operands)
        return rid

    def ext(self, type_id: int, inst: str, *operands: int) -> int:
        return self.value("ExtInst", type_id, self.glsl, GLSL[inst], *operands)

    # ---- types -------------------------------------------------------------------------------
    def _type(self, key: Tuple, opcode: str, *operands: int) -> int:
        if key not in self._types:
            tid = self.new_id()
            self.globals += instruction(OP[opcode], [tid, *operands])
            self._types[key] = tid
        return self._types[key]

    def type_void(self) -> int:
        return self._type(("void",), "TypeVoid")

    def type_bool(self) -> int:
        return self._type(("bool",), "TypeBool")

    def type_int(self, bits: int, signed: bool) -> int:
        if bits == 64:
            self.require("Int64")
        elif bits == 16:
            self.require("Int16")
        elif bits == 8:
            self.require("Int8")
        return self._type(("int", bits, signed), "TypeInt", bits, int(signed))

    def type_float(self, bits: int) -> int:
        if bits == 64:
            self.require("Float64")
        elif bits == 16:
            self.require("Float16")
        return self._type(("float", bits), "TypeFloat", bits)

    def type_vector(self, elem: int, n: int) -> int:
        return self._type(("vec", elem, n), "TypeVector", elem, n)

    def type_array(self, elem: int, n: int) -> int:
        return self._type(("array", elem, n), "TypeArray", elem, self.const_uint(n))

    def type_runtime_array(self, elem: int, stride: int) -> int:
        key = ("rtarray", elem, stride)
        if key not in self._types:
            tid = self._type(key, "TypeRuntimeArray", elem)
            self.decorate(tid, "ArrayStride", stride)
        return self._types[key]

    def type_struct(self, members: Sequence[int], offsets: Sequence[int], tag: str) -> int:
        """A Block-decorated struct (interface blocks; one per `tag`)."""
        key = ("struct", tag, tuple(members))
        if key not in self._types:
            tid = self._type(key, "TypeStruct", *members)
            self.decorate(tid, "Block")
            for i, off in enumerate(offsets):
                self.member_decorate(tid, i, "Offset", off)
        return self._types[key]

    def type_pointer(self, storage: str, pointee: int) -> int:
        return self._type(("ptr", storage, pointee), "TypePointer", STORAGE[storage], pointee)

    def type_function(self, ret: int, *params: int) -> int:
        return self._type(("fn", ret, *params), "TypeFunction", ret, *params)

    # ---- constants ---------------------------------------------------------------------------
    def const(self, type_id: int, kind: str, bits: int, value) -> int:
        """A scalar constant of `type_id` (kind "int" | "uint" | "float" | "bool")."""
        if kind == "bool":
            raw = b"\1" if value else b"\0"
        elif kind == "float":
            raw = struct.pack({16: "<e", 32: "<f", 64: "<d"}[bits], value)
        elif bits < 32:  # one word: sign-extended when signed, zero-extended when not
            v = int(value) & ((1 << bits) - 1)
            if kind == "int" and v >> (bits - 1):
                v -= 1 << bits
            raw = struct.pack("<I", v & 0xFFFFFFFF)
        else:
            raw = struct.pack("<Q", int(value) & ((1 << bits) - 1))[:bits // 8]
        key = (type_id, kind, raw)  # by bits: -0.0 and 0.0 differ, NaN finds itself
        if key in self._consts:
            return self._consts[key]
        cid = self.new_id()
        if kind == "bool":
            self.globals += instruction(OP["ConstantTrue" if value else "ConstantFalse"],
                                        [type_id, cid])
        else:
            raw += b"\0" * (-len(raw) % 4)
            words = list(struct.unpack(f"<{len(raw) // 4}I", raw))
            self.globals += instruction(OP["Constant"], [type_id, cid, *words])
        self._consts[key] = cid
        return cid

    def const_uint(self, value: int) -> int:
        return self.const(self.type_int(32, False), "uint", 32, value)

    def const_int(self, value: int) -> int:
        return self.const(self.type_int(32, True), "int", 32, value)

    # ---- globals -----------------------------------------------------------------------------
    def global_variable(self, storage: str, pointee: int, name: str = "") -> int:
        vid = self.new_id()
        self.globals += instruction(OP["Variable"], [self.type_pointer(storage, pointee), vid,
                                                     STORAGE[storage]])
        if name:
            self.name(vid, name)
        return vid

    def entry_point(self, func: int, name: str, interface: Sequence[int],
                    local_size: Sequence[int]) -> None:
        self.entry_points += instruction(OP["EntryPoint"], [EXEC_MODEL_GLCOMPUTE, func,
                                                            *string_words(name), *interface])
        self.exec_modes += instruction(OP["ExecutionMode"], [func, EXEC_MODE_LOCAL_SIZE,
                                                             *local_size])

    # ---- the module --------------------------------------------------------------------------
    def words(self) -> List[int]:
        body: List[int] = []
        for cap in self.capabilities:
            body += instruction(OP["Capability"], [cap])
        for ext in self.extensions:
            body += instruction(OP["Extension"], string_words(ext))
        body += self.imports
        body += instruction(OP["MemoryModel"], [ADDRESSING_LOGICAL, MEMORY_MODEL_GLSL450])
        body += self.entry_points + self.exec_modes + self.names + self.decorations
        body += self.globals + self.functions
        return [MAGIC, VERSION, GENERATOR, self.next_id, 0, *body]

    def binary(self) -> bytes:
        w = self.words()
        return struct.pack(f"<{len(w)}I", *w)


def listing(words: Sequence[int]) -> str:
    """A plain listing of a module (one instruction a line: opcode name and operand words),
    for when spirv-dis is not installed."""
    out = [f"; SPIR-V magic {words[0]:#010x} version {words[1] >> 16}.{(words[1] >> 8) & 0xFF}"
           f" bound {words[3]}"]
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            out.append(f"; malformed instruction at word {i}")
            break
        ops = " ".join(str(w) for w in words[i + 1:i + count])
        out.append(f"Op{OPNAME.get(opcode, str(opcode))} {ops}".rstrip())
        i += count
    return "\n".join(out) + "\n"
