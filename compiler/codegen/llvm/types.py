"""LLVM types of the IR's dtypes and of the TVM-FFI ABI structs, and the per-module context
(declared runtime services, string constants) shared by the LLVM codegen's files.

Registers hold bool as i1 and bfloat16 as its 16 raw bits (i16); memory holds bool as i8.
Pointers are opaque (`ptr`).
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Sequence

from llvmlite import ir

from ...ir.dtype import DType
from ...ir.errors import InternalError

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()

# TVMFFIAny {int32 type_index; uint32 zero_padding; union (8 bytes)}
ANY = ir.LiteralStructType([I32, I32, I64])
# DLTensor {data; {device_type, device_id}; ndim; {code, bits, lanes}; shape; strides; byte_offset}
DLTENSOR = ir.LiteralStructType([PTR, ir.LiteralStructType([I32, I32]), I32,
                                 ir.LiteralStructType([I8, I8, I16]), PTR, PTR, I64])
# TVMParallelGroupEnv {void* sync_handle; int32 num_task}
PARALLEL_ENV = ir.LiteralStructType([PTR, I32])
# int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata)
PARALLEL_LAMBDA = ir.FunctionType(I32, [I32, PTR, PTR])
# int (*TVMFFISafeCallType)(void* self, const TVMFFIAny* args, int32 num_args, TVMFFIAny* result)
SAFE_CALL = ir.FunctionType(I32, [PTR, PTR, I32, PTR])

# Runtime services the generated code calls directly (resolved against the loaded runtime, as
# the C target's objects are): name -> (return type, argument types).
SERVICES = {
    "TVMFFIErrorSetRaisedFromCStr": (VOID, [PTR, PTR]),
    "TVMFFIErrorSetRaisedFromCStrParts": (VOID, [PTR, PTR, I32]),
    "TVMFFIFunctionCall": (I32, [PTR, PTR, I32, PTR]),
    "TVMFFIEnvModLookupFromImports": (I32, [PTR, PTR, PTR]),
    "TVMFFIHandleInitOnce": (I32, [PTR, PTR]),
    "TVMFFIObjectDecRef": (I32, [PTR]),
    "TVMFFIEnvModRegisterSystemLibSymbol": (I32, [PTR, PTR]),
    "TVMBackendAllocWorkspace": (PTR, [I32, I32, I64, I32, I32]),
    "TVMBackendFreeWorkspace": (I32, [I32, I32, PTR]),
    "TVMBackendParallelLaunch": (I32, [PTR, PTR, I32]),
}
LIBRARY_CTX = "__tvm_ffi__library_ctx"
# The attribute of `stage.pragma(axis, "unroll_disable")`: LLVM must not unroll that loop (a
# reduction loop around a register tile that fills the register file: unrolled, the machine
# scheduler hoists the loads of several steps and spills accumulators).
UNROLL_DISABLE = "pragma_unroll_disable"
# The attribute of `stage.pragma(axis, "no_strength_reduce")`: the loops of this nest gain
# nothing from LLVM's loop strength reduction, which then does not run on the function's module
# (a register-tiled convolution band: in ResNet-18's build LSR took 0.79 of the 5.0 s of LLVM
# time, and the bands run as fast without it).
NO_STRENGTH_REDUCE = "pragma_no_strength_reduce"


def scalar_type(dtype: DType) -> ir.Type:
    """The register type of one lane of `dtype`."""
    if dtype.is_handle:
        return PTR
    if dtype.is_bool:
        return I1
    if dtype.is_bfloat:
        return I16
    if dtype.is_float:
        return {16: F16, 32: F32, 64: F64}[dtype.bits]
    if dtype.is_integer:
        return ir.IntType(dtype.bits)
    raise InternalError(f"llvm codegen: no LLVM type for dtype {dtype}")


def llvm_type(dtype: DType) -> ir.Type:
    """The register type of `dtype` (a vector type for lanes > 1)."""
    elem = scalar_type(dtype)
    return elem if dtype.lanes == 1 else ir.VectorType(elem, dtype.lanes)


def memory_type(dtype: DType) -> ir.Type:
    """The in-memory type of `dtype`: as `llvm_type`, except bool is a byte."""
    elem = I8 if dtype.is_bool else scalar_type(dtype)
    return elem if dtype.lanes == 1 else ir.VectorType(elem, dtype.lanes)


def opaque(value: ir.Value) -> ir.Value:
    """`value` (an alloca or global) typed as an opaque `ptr`, as LLVM sees it."""
    value.type = PTR
    return value


class TextConstant(ir.Constant):
    """A constant given by its IR text (`poison`, `zeroinitializer`, `splat (float 2.0)`):
    llvmlite would spell a vector constant out lane by lane."""

    def __init__(self, ty: ir.Type, text: str):   # noqa: D107 (no Constant.__init__: it
        self.type, self.constant = ty, text        # would split the text into lanes)

    def _to_string(self) -> str:
        return f"{self.type} {self.constant}"

    def _get_reference(self) -> str:
        return self.constant


def global_variable(module: ir.Module, ty: ir.Type, name: str) -> ir.GlobalVariable:
    return opaque(ir.GlobalVariable(module, ty, name))


class ModuleContext:
    """One LLVM module being built: its declarations, string constants and codegen options."""

    def __init__(self, name: str, triple: str, data_layout: str, fast_math: Sequence[str] = (),
                 system_lib: bool = False):
        self.module = ir.Module(name=name)
        self.module.triple = triple
        self.module.data_layout = data_layout
        self.fast_math = tuple(fast_math)
        self.system_lib = system_lib
        self.noalias = True  # tensor arguments do not overlap (the PrimFunc's tir.noalias)
        self.strength_reduce = True  # False once a loop asked for none (NO_STRENGTH_REDUCE)
        self.avx512 = False  # the target has AVX-512F: approx_math may use its instructions
        self._strings: Dict[str, ir.GlobalVariable] = {}
        self._arrays: Dict[str, ir.GlobalVariable] = {}
        self._counter = 0
        self._tbaa_root = None
        self._tbaa: Dict[int, object] = {}  # id(data Var) -> access tag, for distinct buffers
        # string attributes of every defined function ("target-cpu"="skylake" ...)
        self.function_attributes: Dict[str, str] = {}
        self._debug_unit = None

    def text(self) -> str:
        """The module's LLVM IR text, the function attributes on every definition."""
        text = str(self.module)
        if not self.function_attributes:
            return text
        attrs = " ".join(f'"{k}"="{v}"' for k, v in self.function_attributes.items())
        return re.sub(r"^(define [^\n]*?)((?: !dbg ![0-9]+)?\n?\{)$",
                      lambda m: f"{m.group(1)} {attrs}{m.group(2)}", text, flags=re.MULTILINE)

    def debug_location(self, fn: ir.Function, name: str):
        """Debug information for `fn` (a DWARF subprogram called `name` in the compile unit of
        this module): the location its instructions carry."""
        m = self.module
        if self._debug_unit is None:
            file = m.add_debug_info("DIFile", {"filename": f"{self.module.name}.tir",
                                               "directory": "."})
            self._debug_unit = (file, m.add_debug_info("DICompileUnit", {
                "language": ir.DIToken("DW_LANG_C"), "file": file, "producer": "kiln",
                "isOptimized": True, "runtimeVersion": 0,
                "emissionKind": ir.DIToken("FullDebug")}, is_distinct=True))
            m.add_named_metadata("llvm.dbg.cu", self._debug_unit[1])
            m.add_named_metadata("llvm.module.flags", [ir.Constant(I32, 2), "Debug Info Version",
                                                       ir.Constant(I32, 3)])
        file, unit = self._debug_unit
        kind = m.add_debug_info("DISubroutineType", {"types": m.add_metadata([None])})
        sub = m.add_debug_info("DISubprogram", {
            "name": name, "linkageName": fn.name, "scope": file, "file": file, "line": 1,
            "type": kind, "scopeLine": 1, "spFlags": ir.DIToken("DISPFlagDefinition | "
                                                                "DISPFlagOptimized"),
            "unit": unit}, is_distinct=True)
        fn.set_metadata("dbg", sub)
        return m.add_debug_info("DILocation", {"line": 1, "column": 0, "scope": sub})

    def mark_distinct(self, var) -> None:
        """`var` points to memory no other data var reaches (a tensor argument under
        tir.noalias, or an allocation): its accesses get their own TBAA type, as in TVM."""
        if self._tbaa_root is None:
            self._tbaa_root = self.module.add_metadata([ir.MetaDataString(self.module,
                                                                          "kiln buffers")])
        node = self.module.add_metadata([ir.MetaDataString(self.module, self.unique(var.name)),
                                         self._tbaa_root, ir.Constant(I64, 0)])
        self._tbaa[id(var)] = self.module.add_metadata([node, node, ir.Constant(I64, 0)])

    def loop_unroll_disable(self):
        """A fresh loop ID (`!N = !{!N, !{"llvm.loop.unroll.disable"}}`) for one loop's back
        edge: LLVM leaves that loop rolled."""
        option = self.module.add_metadata([ir.MetaDataString(self.module,
                                                             "llvm.loop.unroll.disable")])
        loop_id = self.module.add_metadata([ir.MetaDataString(self.module,
                                                              self.unique("loop")), option])
        loop_id.operands = (loop_id, option)  # a loop ID refers to itself
        return loop_id

    def tbaa(self, var):
        """The TBAA access tag of accesses through `var`, or None (may alias anything)."""
        return self._tbaa.get(id(var))

    def unique(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}.{self._counter}"

    def declare(self, name: str, ret: Optional[ir.Type] = None, args: Sequence[ir.Type] = (),
                var_arg: bool = False) -> ir.Function:
        """The function `name`, declared on first use (a runtime service if no types given)."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        if ret is None:
            ret, args = SERVICES[name]
        fn = ir.Function(self.module, ir.FunctionType(ret, list(args), var_arg=var_arg), name)
        fn.attributes.add("nounwind")
        return fn

    def cstring(self, text: str) -> ir.Constant:
        """A pointer to a private NUL-terminated constant holding `text`."""
        gv = self._strings.get(text)
        if gv is None:
            data = bytearray(text.encode("utf-8")) + b"\0"
            ty = ir.ArrayType(I8, len(data))
            gv = global_variable(self.module, ty, self.unique(".str"))
            gv.linkage = "private"
            gv.global_constant = True
            gv.unnamed_addr = True
            gv.initializer = ir.Constant(ty, data)
            self._strings[text] = gv
        return gv

    def constant_array(self, element: ir.Type, values) -> ir.GlobalVariable:
        """A private constant array of `values` (constants of type `element`), one per
        distinct contents in the module."""
        init = ir.Constant(ir.ArrayType(element, len(values)), list(values))
        key = str(init)
        gv = self._arrays.get(key)
        if gv is None:
            gv = global_variable(self.module, init.type, self.unique(".parts"))
            gv.linkage = "private"
            gv.global_constant = True
            gv.unnamed_addr = True
            gv.initializer = init
            self._arrays[key] = gv
        return gv

    def library_ctx(self) -> ir.GlobalVariable:
        """The `void* __tvm_ffi__library_ctx` slot (defined once per library by llvm_module)."""
        gv = self.module.globals.get(LIBRARY_CTX)
        if gv is None:
            gv = global_variable(self.module, PTR, LIBRARY_CTX)
        return gv
