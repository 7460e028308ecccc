"""Expressions of the C-family printer (statements: printer.py). One mapping from IR nodes to
C-like text, shared by the C host codegen and (later) CUDA, OpenCL and Metal, which override
only what differs (type names, qualifiers, intrinsics, thread indices).

Vectors (Ramp / Broadcast / vector loads, made by the vectorize pass) have two forms. The lane
form works everywhere: a store of a vector value becomes a loop over its lanes in which every
vector sub-expression is printed for lane `l` (`Ramp(b, s, n)` -> `b + s*l`, `Broadcast(v)` ->
`v`). The vector form (`vexpr`) is one statement per chunk of the vector, at constant lane
offsets, in GCC vector extensions (`kiln_float32x8`: typedefs and load / store / splat helpers in
the prelude). A chunk is as wide as the target CPU's vector registers allow (`vector_bytes`,
decided at code generation), narrower when that does not divide the lane count (gcd). It covers
what maps onto vector extensions one to one: float32/64 and 32/64-bit integer vectors, +, -, *
(and / for floats), Broadcast, and loads of contiguous (stride-1 Ramp) or broadcast indices;
anything else raises `NotVectorForm` and the statement keeps the lane form only. A statement
with a vector form prints both, under `#if KILN_VECTOR_EXT` (gcc and clang) / `#else` (other
compilers, or -DKILN_NO_VECTOR_EXT). float16 / bfloat16 values are computed as `float` and
converted at loads, stores and casts through helpers of the prelude (plain C99 has no half type).

Buffer indices are printed in 64-bit arithmetic: every int32 Var in an index reads as
`(int64_t)v`, so the C compiler sees affine 64-bit addresses it can tell apart (int32
arithmetic sign-extended after the fact hides that two rows never overlap). The values are the
same wherever the int32 arithmetic does not overflow, and there it is undefined in the IR.
Expressions are fully parenthesised; statements are printed flat (LetStmt and AssertStmt chains
do not nest blocks).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Set

from ...ir.dtype import DType, int32
from ...ir.errors import InternalError, UnsupportedOpError
from ...tir import expr as E
from ...tir.functor import substitute
from .reserved import RESERVED, RESERVED_PREFIXES

_ARITH = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=",
          E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||"}
_BITWISE = {"tir.shift_left": "<<", "tir.shift_right": ">>", "tir.bitwise_and": "&",
            "tir.bitwise_or": "|", "tir.bitwise_xor": "^"}
# libm names whose float flavour takes an `f` suffix; the rest are macros or special-cased.
_LIBM = {"exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "tanh", "erf", "fabs",
         "floor", "ceil", "round", "trunc", "nearbyint", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "atan2", "fmod", "copysign",
         "hypot", "ldexp"}
_CLASSIFY = {"isnan", "isinf", "isfinite"}
_VECTOR_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/"}


class NotVectorForm(Exception):
    """The expression has no GCC-vector-extension form; the caller prints lanes instead."""


class CExprPrinter:
    """Prints expressions. Subclasses override the hooks marked "dialect"."""

    indent_unit = "  "

    def __init__(self, vector_bytes: int = 16) -> None:
        self.vector_bytes = vector_bytes         # the widest vector register, in bytes
        self.names: Dict[int, str] = {}
        self.taken: Set[str] = set()
        self.keep: List[E.Var] = []
        self.lines: List[str] = []
        self.level = 1
        self.lane: Optional[str] = None          # the lane (variable or offset) of vectors
        self.vector_lanes = 0                    # the lane count of the vector statement
        self.wide_index = False                  # printing a buffer index (int32 -> int64)
        self.vector_vars: Set[int] = set()       # vars bound to vector values (C arrays)
        self.helpers: Set[str] = set()           # prelude helpers the code uses
        self.pointer_types: Dict[int, DType] = {}  # handle var -> element type it points to

    # ---- names and types ---------------------------------------------------------------------
    def name_of(self, var: E.Var) -> str:
        key = id(var)
        if key not in self.names:
            base = re.sub(r"[^0-9A-Za-z_]", "_", var.name or "v") or "v"
            if base.startswith(RESERVED_PREFIXES):
                base = "v_" + base  # the prelude's own names (reserved.py)
            self.names[key] = self.fresh(base)
            self.keep.append(var)  # ids stay unique only while the Var lives
        return self.names[key]

    def fresh(self, base: str) -> str:
        """A new C identifier from `base`, distinct from every name given out so far and from
        the keywords, types and functions the generated code uses (reserved.py)."""
        base = re.sub(r"[^0-9A-Za-z_]", "_", base) or "v"
        if base[0].isdigit():
            base = "v_" + base
        name, n = base, 1
        while name in self.taken or name in RESERVED:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name

    def value_type(self, t: DType) -> str:
        """The C type of a (scalar) value of dtype `t` (dialect)."""
        if t.is_handle:
            return "void*"
        if t.is_bool:
            return "int32_t"
        if t.is_float:
            return "double" if t.bits == 64 else "float"
        if t.is_integer:
            return f"{'u' if t.is_uint else ''}int{max(t.bits, 8)}_t"
        raise UnsupportedOpError(f"C codegen has no type for {t}")

    def storage_type(self, t: DType) -> str:
        """The C type of a buffer element of dtype `t` (dialect)."""
        if t.is_bool:
            return "int8_t"
        if t.is_float and t.bits == 16:
            return "uint16_t"
        return self.value_type(t.element_of())

    # ---- output ------------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append(self.indent_unit * self.level + line)

    def text(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.lines else "")

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e) -> str:
        if isinstance(e, (E.EqualOp, E.NotEqualOp)):
            e = e.asobject()
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise UnsupportedOpError(f"C codegen cannot print {type(e).__name__}: {e}")
        return method(e)

    def expr_Var(self, e: E.Var) -> str:
        name = self.name_of(e)
        if id(e) in self.vector_vars:
            return f"{name}[{self.lane}]" if self.lane else name
        if self.wide_index and e.dtype == int32:
            return f"((int64_t){name})"
        return name

    expr_SizeVar = expr_Var

    def expr_IntImm(self, e: E.IntImm) -> str:
        t, v = e.dtype, e.value
        if t.is_bool:
            return "1" if v else "0"
        if t.is_uint:
            return f"(({self.value_type(t)}){v}U)" if t.bits < 64 else f"((uint64_t){v}ULL)"
        if t.bits == 64:
            if v == -(2**63):
                return "((int64_t)(-9223372036854775807LL - 1))"
            return f"((int64_t){v}LL)"
        if v == -(2**31):
            return "(-2147483647 - 1)"
        text = str(v) if v >= 0 else f"({v})"
        return text if t.bits == 32 else f"(({self.value_type(t)}){text})"

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        v, single = e.value, e.dtype.bits != 64
        if math.isnan(v):
            return "NAN" if single else "((double)NAN)"
        if math.isinf(v):
            return ("" if v > 0 else "-") + ("INFINITY" if single else "((double)INFINITY)")
        text = repr(float(v))
        if "e" not in text and "." not in text:
            text += ".0"
        return f"{text}f" if single else text

    def expr_StringImm(self, e: E.StringImm) -> str:
        return '"' + e.value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'

    def expr_Cast(self, e: E.Cast) -> str:
        src, dst = e.value.dtype, e.dtype
        value = self.expr(e.value)
        if dst.is_bool:
            return f"({value} != 0)"
        if dst.is_float and dst.bits == 16:
            kind = "bf16" if dst.is_bfloat else "f16"
            self.helpers.add(kind)
            return f"kiln_{kind}_round((float)({value}))"
        if src == dst:
            return value
        return f"(({self.value_type(dst.element_of())})({value}))"

    def expr_BinaryOp(self, e: E.BinaryOp) -> str:
        op = _ARITH.get(type(e))
        if op is None:
            raise InternalError(f"no C operator for {type(e).__name__}")
        text = f"({self.expr(e.a)} {op} {self.expr(e.b)})"
        t = e.dtype
        if isinstance(e, (E.Add, E.Sub, E.Mul)) and t.is_integer and t.lanes == 1 and t.bits < 32:
            # C computes narrow integers in int: wrap the result back to its own type, as the
            # interpreter and LLVM do, before a comparison or another operator sees it.
            return f"(({self.value_type(t)}){text})"
        return text

    def expr_Div(self, e: E.Div) -> str:
        return f"({self.expr(e.a)} / {self.expr(e.b)})"

    def expr_Mod(self, e: E.Mod) -> str:
        if e.dtype.is_float:
            return self.math_call("fmod", e.dtype, [e.a, e.b])
        return f"({self.expr(e.a)} % {self.expr(e.b)})"

    def _typed_helper(self, op: str, e: E.BinaryOp) -> str:
        ctype = self.value_type(e.dtype.element_of())
        self.helpers.add(f"{op}:{ctype}")
        return f"kiln_{op}_{ctype.replace('_t', '')}({self.expr(e.a)}, {self.expr(e.b)})"

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        if e.dtype.is_float:
            return self.math_call("floor", e.dtype, [E.Div(e.a, e.b)])
        return self._typed_helper("floordiv", e)

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        if e.dtype.is_float:
            return self.expr(e.a - E.Call(e.dtype, "tir.floor", (E.Div(e.a, e.b),)) * e.b)
        return self._typed_helper("floormod", e)

    def expr_Min(self, e: E.Min) -> str:
        return self._typed_helper("min", e)

    def expr_Max(self, e: E.Max) -> str:
        return self._typed_helper("max", e)

    def expr_Not(self, e: E.Not) -> str:
        return f"(!{self.expr(e.a)})"

    def expr_Select(self, e: E.Select) -> str:
        return (f"({self.expr(e.condition)} ? {self.expr(e.true_value)} : "
                f"{self.expr(e.false_value)})")

    def expr_Let(self, e: E.Let) -> str:
        return self.expr(substitute(e.body, {e.var: e.value}))

    def expr_Ramp(self, e: E.Ramp) -> str:
        self._need_lane(e)
        if self.lane == "0":
            return self.expr(e.base)
        if isinstance(e.stride, E.IntImm) and e.stride.value == 1:
            return f"({self.expr(e.base)} + {self.lane})"
        return f"({self.expr(e.base)} + ({self.expr(e.stride)} * {self.lane}))"

    def expr_Broadcast(self, e: E.Broadcast) -> str:
        return self.expr(e.value)

    def expr_Shuffle(self, e) -> str:
        """Lane `self.lane` of the shuffle: its source lane, chosen by a chain of conditionals
        when the lane is not a constant."""
        def source(lane: int) -> str:
            vector, k = e.lane_source(lane)
            if vector.dtype.lanes == 1:
                return self.expr(vector)
            outer, self.lane = self.lane, str(k)
            try:
                return self.expr(vector)
            finally:
                self.lane = outer

        if e.dtype.lanes == 1:
            return source(0)
        self._need_lane(e)
        if self.lane.isdigit():
            return source(int(self.lane))
        text = source(e.dtype.lanes - 1)
        for lane in range(e.dtype.lanes - 2, -1, -1):
            text = f"(({self.lane} == {lane}) ? {source(lane)} : {text})"
        return text

    # ---- vector form (GCC vector extensions) ---------------------------------------------------
    def vector_chunk(self, t: DType) -> int:
        """The lanes of one chunk of vector dtype `t`: as many as fill a vector register, or
        the largest power of two dividing the lane count when that is fewer; NotVectorForm when
        the dtype has no vector form (or a chunk would be a single lane)."""
        lanes, elem = t.lanes, t.element_of()
        if not ((elem.is_float and elem.bits in (32, 64)) or
                (elem.is_integer and not elem.is_bool and elem.bits in (32, 64))):
            raise NotVectorForm(str(t))
        chunk = math.gcd(lanes, max(self.vector_bytes * 8 // elem.bits, 1))
        if chunk < 2:
            raise NotVectorForm(str(t))
        return chunk

    def vector_type(self, t: DType) -> str:
        """The vector-extension type of one chunk of vector dtype `t` (`kiln_float32x8`)."""
        elem, chunk = t.element_of(), self.vector_chunk(t)
        ctype = self.value_type(elem)
        name = f"kiln_{elem}x{chunk}"
        self.helpers |= {"vector_ext", f"vec:{name}:{ctype}:{chunk}"}
        return name

    def vexpr(self, e, vt: str) -> str:
        """`e` as a vector-extension expression of type `vt` for the chunk of lanes starting at
        `self.lane`, or NotVectorForm."""
        if e.dtype.lanes != self.vector_lanes or self.vector_type(e.dtype) != vt:
            raise NotVectorForm(str(e))
        if isinstance(e, E.Var):
            if id(e) not in self.vector_vars:
                raise NotVectorForm(e.name)
            return f"{vt}_load(&{self.name_of(e)}[{self.lane}])"
        if isinstance(e, E.Broadcast):
            return f"{vt}_splat({self.expr(e.value)})"
        if isinstance(e, E.Let):
            return self.vexpr(substitute(e.body, {e.var: e.value}), vt)
        if type(e) in _VECTOR_OPS and (e.dtype.is_float or not isinstance(e, E.Div)):
            return f"({self.vexpr(e.a, vt)} {_VECTOR_OPS[type(e)]} {self.vexpr(e.b, vt)})"
        if isinstance(e, E.BufferLoad):
            t = e.buffer.dtype
            if t.is_float and t.bits == 16 or t.is_bool or len(e.indices) != 1:
                raise NotVectorForm(str(e))
            index = e.indices[0]
            if isinstance(index, E.Broadcast):
                return f"{vt}_splat({self.element(e.buffer, [index.value])})"
            if is_contiguous(index):
                return f"{vt}_load(&{self.element(e.buffer, [index])})"
        raise NotVectorForm(str(e))

    def _need_lane(self, e) -> None:
        if self.lane is None:
            raise InternalError(f"vector expression {e} printed outside a lane loop")

    def pointer(self, buffer) -> str:
        """The C pointer expression to `buffer`'s elements, cast when the data var was declared
        with another element type."""
        data = buffer.data
        name = self.name_of(data)
        declared = self.pointer_types.get(id(data))
        storage = self.storage_type(buffer.dtype)
        if declared is not None and self.storage_type(declared) == storage:
            return name
        return f"(({storage}*){name})"

    def element(self, buffer, indices) -> str:
        if len(indices) != 1:
            raise InternalError(f"codegen needs flattened (1-D) access to {buffer.name}, got "
                                f"{len(indices)} indices; storage_flatten must run first")
        outer, self.wide_index = self.wide_index, True
        try:
            index = self.expr(indices[0])
            offset = buffer.elem_offset
            if not (isinstance(offset, E.IntImm) and offset.value == 0):
                index = f"({self.expr(offset)} + {index})"
        finally:
            self.wide_index = outer
        return f"{self.pointer(buffer)}[{index}]"

    def expr_BufferLoad(self, e: E.BufferLoad) -> str:
        if e.dtype.lanes > 1:
            self._need_lane(e)
        text = self.element(e.buffer, e.indices)
        t = e.buffer.dtype
        if t.is_float and t.bits == 16:
            kind = "bf16" if t.is_bfloat else "f16"
            self.helpers.add(kind)
            return f"kiln_{kind}_to_f32({text})"
        return text

    def stored_value(self, buffer, value: str) -> str:
        t = buffer.dtype
        if t.is_float and t.bits == 16:
            kind = "bf16" if t.is_bfloat else "f16"
            self.helpers.add(kind)
            return f"kiln_f32_to_{kind}({value})"
        return value

    # ---- calls -------------------------------------------------------------------------------
    def math_call(self, name: str, dtype: DType, args) -> str:
        """A libm call in the flavour of `dtype` (dialect)."""
        text = ", ".join(self.expr(a) for a in args)
        if name in _CLASSIFY:
            return f"({name}({text}) != 0)"
        suffix = "" if dtype.bits == 64 else "f"
        return f"{name}{suffix}({text})"

    def expr_Call(self, e: E.Call) -> str:
        op = e.op
        short = op[4:] if op.startswith("tir.") else op
        if short in _LIBM or short in _CLASSIFY:
            ref = e.args[0].dtype if short in _CLASSIFY else e.dtype
            return self.math_call(short, ref, e.args)
        if op in _BITWISE:
            return f"({self.expr(e.args[0])} {_BITWISE[op]} {self.expr(e.args[1])})"
        if op == "tir.bitwise_not":
            return f"(~{self.expr(e.args[0])})"
        if op == "tir.if_then_else":
            c, a, b = (self.expr(x) for x in e.args)
            return f"({c} ? {a} : {b})"
        if op == "tir.likely":
            return self.expr(e.args[0])
        if op == "tir.abs":
            if e.dtype.is_float:
                return self.math_call("fabs", e.dtype, e.args)
            x = self.expr(e.args[0])
            return f"(({x} < 0) ? (-{x}) : {x})"
        if op == "tir.handle_is_null":
            return f"({self.expr(e.args[0])} == NULL)"
        if op == "tir.address_of":
            load = e.args[0]
            return f"((void*)(&{self.element(load.buffer, load.indices)}))"
        if op == "tir.reinterpret":
            src = self.value_type(e.args[0].dtype)
            dst = self.value_type(e.dtype)
            self.helpers.add(f"bitcast:{src}:{dst}")
            return f"kiln_bitcast_{_tag(src)}_{_tag(dst)}({self.expr(e.args[0])})"
        return self.call_extra(e)

    def call_extra(self, e: E.Call) -> str:
        """Intrinsics only some dialects know (dialect)."""
        raise UnsupportedOpError(f"the C codegen does not implement the intrinsic {e.op!r}")


for _cls in _ARITH:
    setattr(CExprPrinter, "expr_" + _cls.__name__, CExprPrinter.expr_BinaryOp)


def is_contiguous(index) -> bool:
    """Whether a vector index is Ramp(base, 1, lanes)."""
    return (isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm)
            and index.stride.value == 1)


def _tag(ctype: str) -> str:
    return ctype.replace("_t", "").replace("*", "p").replace(" ", "")
