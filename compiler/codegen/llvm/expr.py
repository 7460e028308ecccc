"""Expressions of the loop IR → LLVM values (scalars and vectors), for the LLVM host codegen.

A mixin of `llvm_function.FunctionEmitter`: it expects `self.b` (an IRBuilder), `self.ctx` (a
`ModuleContext`) and `self.vars` (id(Var) → LLVM value). Semantics follow the C target: integer
Div/Mod truncate, FloorDiv/FloorMod follow Python, float comparisons are ordered except `!=`,
float16 uses LLVM `half`, bfloat16 is computed in float32 and rounded to nearest even.
"""
from __future__ import annotations

import math
import struct
from typing import Callable

from llvmlite import ir

from ... import tir as kir
from ...ir.dtype import DType
from ...ir.errors import InternalError
from ...tir.lanes import constant_term, known_multiple, lane_offsets
from .types import (
    F32,
    I1,
    I16,
    I32,
    I64,
    PTR,
    TextConstant,
    llvm_type,
    memory_type,
    scalar_type,
)


def splat(ty: ir.Type, value) -> ir.Constant:
    """A constant `value` of `ty`, in every lane when `ty` is a vector."""
    if isinstance(ty, ir.VectorType):
        return TextConstant(ty, f"splat ({ir.Constant(ty.element, value)})")
    return ir.Constant(ty, value)


def with_element(ty: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType(elem, ty.count) if isinstance(ty, ir.VectorType) else elem


def bfloat16_bits(value: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if value != value:  # NaN
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if bits > 1 and value >> (bits - 1) else value


_ICMP = {kir.EQ: "==", kir.NE: "!=", kir.LT: "<", kir.LE: "<=", kir.GT: ">", kir.GE: ">="}


class ExprEmitter:
    """Expression half of the function emitter."""

    b: ir.IRBuilder

    def expr(self, e) -> ir.Value:
        if isinstance(e, (kir.expr.EqualOp, kir.expr.NotEqualOp)):
            e = e.asobject()
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise InternalError(f"llvm codegen: no rule for expression {type(e).__name__}: {e}")
        return method(e)

    # ---- leaves ----------------------------------------------------------------------------
    def expr_IntImm(self, e):
        if e.dtype.is_bool:
            return ir.Constant(I1, 1 if e.value else 0)
        if e.dtype.is_float:
            return self.expr_FloatImm(e)
        return ir.Constant(scalar_type(e.dtype), _signed(int(e.value), e.dtype.bits))

    def expr_FloatImm(self, e):
        if e.dtype.is_bfloat:
            return ir.Constant(I16, bfloat16_bits(float(e.value)))
        return ir.Constant(scalar_type(e.dtype), float(e.value))

    def expr_StringImm(self, e):
        return self.ctx.cstring(e.value)

    def expr_Var(self, v):
        try:
            return self.vars[id(v)]
        except KeyError:
            raise InternalError(f"llvm codegen: variable {v.name!r} used but not defined") from None

    expr_SizeVar = expr_Var

    def expr_Let(self, e):
        value = self.expr(e.value)
        with self.bound(e.var, value):
            return self.expr(e.body)

    # ---- casts -----------------------------------------------------------------------------
    def expr_Cast(self, e):
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def cast(self, v: ir.Value, src: DType, dst: DType) -> ir.Value:
        b = self.b
        if src.lanes == 1 and dst.lanes > 1:
            return self.broadcast(self.cast(v, src, dst.element_of()), dst.lanes)
        if src.element_of() == dst.element_of():
            return v
        ty = llvm_type(dst)
        if src.is_bfloat:
            return self.cast(self.bf16_to_f32(v), DType(2, 32, src.lanes), dst)
        if dst.is_bfloat:
            return self.f32_to_bf16(self.cast(v, src, DType(2, 32, dst.lanes)))
        if dst.is_bool:
            if src.is_float:
                return b.fcmp_unordered("!=", v, splat(v.type, 0.0))
            if src.is_handle:
                return b.icmp_unsigned("!=", v, ir.Constant(PTR, None))
            return b.icmp_unsigned("!=", v, splat(v.type, 0))
        if src.is_handle or dst.is_handle:
            return b.ptrtoint(v, ty) if src.is_handle else b.inttoptr(v, ty)
        if src.is_float and dst.is_float:
            return b.fpext(v, ty) if dst.bits > src.bits else b.fptrunc(v, ty)
        if src.is_float:
            return b.fptosi(v, ty) if dst.is_int else b.fptoui(v, ty)
        if dst.is_float:
            return b.sitofp(v, ty) if src.is_int else b.uitofp(v, ty)
        if dst.bits < src.bits:
            return b.trunc(v, ty)
        if dst.bits > src.bits:
            return b.sext(v, ty) if src.is_int else b.zext(v, ty)
        return v

    def bf16_to_f32(self, v: ir.Value) -> ir.Value:
        wide = self.b.zext(v, with_element(v.type, I32))
        return self.b.bitcast(self.b.shl(wide, splat(wide.type, 16)), with_element(v.type, F32))

    def f32_to_bf16(self, v: ir.Value) -> ir.Value:
        b = self.b
        i32 = with_element(v.type, I32)
        bits = b.bitcast(v, i32)
        high = b.lshr(bits, splat(i32, 16))
        rounded = b.add(b.add(bits, splat(i32, 0x7FFF)), b.and_(high, splat(i32, 1)))
        nan = b.or_(high, splat(i32, 0x40))
        out = b.select(b.fcmp_unordered("uno", v, v), nan, b.lshr(rounded, splat(i32, 16)))
        return b.trunc(out, with_element(v.type, I16))

    # ---- arithmetic ------------------------------------------------------------------------
    def float_op(self, dtype: DType, fn: Callable, *values) -> ir.Value:
        """`fn(*values)` on floats; bfloat16 is widened to float32 and rounded back."""
        if dtype.is_bfloat:
            return self.f32_to_bf16(fn(*[self.bf16_to_f32(v) for v in values]))
        return fn(*values)

    def _fm(self):
        return self.ctx.fast_math

    def _arith(self, e, signed, unsigned, floating):
        a, b = self.expr(e.a), self.expr(e.b)
        t = e.a.dtype
        if t.is_float:
            return self.float_op(t, lambda x, y: floating(x, y, flags=self._fm()), a, b)
        if t.is_int:
            return signed(a, b)
        return unsigned(a, b)

    def _nsw(self, op):
        """A signed integer operation marked `nsw` (signed overflow is undefined, as in C and
        TVM), so LLVM may widen 32-bit index arithmetic into 64-bit induction variables."""
        return lambda x, y: op(x, y, flags=("nsw",))

    def expr_Add(self, e):
        if e.dtype.is_handle:
            return self.b.gep(self.expr(e.a), [self.expr(e.b)], source_etype=ir.IntType(8))
        return self._arith(e, self._nsw(self.b.add), self.b.add, self.b.fadd)

    def expr_Sub(self, e):
        return self._arith(e, self._nsw(self.b.sub), self.b.sub, self.b.fsub)

    def expr_Mul(self, e):
        return self._arith(e, self._nsw(self.b.mul), self.b.mul, self.b.fmul)

    def expr_Div(self, e):
        return self._arith(e, self.b.sdiv, self.b.udiv, self.b.fdiv)

    def expr_Mod(self, e):
        return self._arith(e, self.b.srem, self.b.urem, self.b.frem)

    def expr_FloorDiv(self, e):
        t = e.a.dtype
        a, bv = self.expr(e.a), self.expr(e.b)
        if t.is_float:
            return self.float_op(t, lambda x, y: self.unary_intrinsic(
                "llvm.floor", self.b.fdiv(x, y, flags=self._fm())), a, bv)
        if not t.is_int:
            return self.b.udiv(a, bv)
        q, r = self.b.sdiv(a, bv), self.b.srem(a, bv)
        return self.b.sub(q, self.b.zext(self._floor_adjust(r, bv), q.type))

    def expr_FloorMod(self, e):
        t = e.a.dtype
        a, bv = self.expr(e.a), self.expr(e.b)
        if t.is_float:
            def fmod(x, y):
                q = self.unary_intrinsic("llvm.floor", self.b.fdiv(x, y, flags=self._fm()))
                return self.b.fsub(x, self.b.fmul(q, y, flags=self._fm()), flags=self._fm())
            return self.float_op(t, fmod, a, bv)
        if not t.is_int:
            return self.b.urem(a, bv)
        r = self.b.srem(a, bv)
        return self.b.select(self._floor_adjust(r, bv), self.b.add(r, bv), r)

    def _floor_adjust(self, r, divisor):
        """Whether a truncated remainder `r` differs in sign from the divisor (and is nonzero)."""
        zero = splat(r.type, 0)
        signs = self.b.xor(self.b.icmp_signed("<", r, zero), self.b.icmp_signed("<", divisor, zero))
        return self.b.and_(self.b.icmp_signed("!=", r, zero), signs)

    def _minmax(self, e, op):
        a, bv = self.expr(e.a), self.expr(e.b)
        t = e.a.dtype
        if t.is_float:
            return self.float_op(t, lambda x, y: self.b.select(
                self.b.fcmp_ordered(op, x, y), x, y), a, bv)
        cmp = self.b.icmp_signed if t.is_int else self.b.icmp_unsigned
        return self.b.select(cmp(op, a, bv), a, bv)

    def expr_Min(self, e):
        return self._minmax(e, "<")

    def expr_Max(self, e):
        return self._minmax(e, ">")

    # ---- comparisons and logic -------------------------------------------------------------
    def _compare(self, e):
        a, bv = self.expr(e.a), self.expr(e.b)
        t, op = e.a.dtype, _ICMP[type(e)]
        if t.is_bfloat:
            a, bv = self.bf16_to_f32(a), self.bf16_to_f32(bv)
        if t.is_float:
            if op == "!=":
                return self.b.fcmp_unordered(op, a, bv)
            return self.b.fcmp_ordered(op, a, bv)
        if t.is_int:
            return self.b.icmp_signed(op, a, bv)
        return self.b.icmp_unsigned(op, a, bv)

    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _compare

    def _short_circuit(self, e, is_and: bool):
        """`a && b` / `a || b` as C evaluates them: `b` only when it decides (it may load
        through a pointer that `a` checks). Vectors evaluate both sides."""
        a = self.expr(e.a)
        if e.dtype.lanes > 1:
            return (self.b.and_ if is_and else self.b.or_)(a, self.expr(e.b))
        start = self.b.block
        rhs = self.b.append_basic_block("and_rhs" if is_and else "or_rhs")
        done = self.b.append_basic_block("and_end" if is_and else "or_end")
        self.b.cbranch(a, rhs, done) if is_and else self.b.cbranch(a, done, rhs)
        self.b.position_at_end(rhs)
        bv = self.expr(e.b)
        rhs_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        out = self.b.phi(I1)
        out.add_incoming(ir.Constant(I1, 0 if is_and else 1), start)
        out.add_incoming(bv, rhs_end)
        return out

    def expr_And(self, e):
        return self._short_circuit(e, True)

    def expr_Or(self, e):
        return self._short_circuit(e, False)

    def expr_Not(self, e):
        v = self.expr(e.a)
        return self.b.xor(v, splat(v.type, -1 if not e.dtype.is_bool else 1))

    def expr_Select(self, e):
        return self.b.select(self.expr(e.condition), self.expr(e.true_value),
                             self.expr(e.false_value))

    # ---- vectors ---------------------------------------------------------------------------
    def broadcast(self, v: ir.Value, lanes: int) -> ir.Value:
        """`v` in every lane: a splat constant for a constant, else an insert and a splat
        shuffle (poison operands: short IR text)."""
        if type(v) is ir.Constant and v.constant is not ir.Undefined:
            return splat(ir.VectorType(v.type, lanes), v.constant)
        poison = TextConstant(ir.VectorType(v.type, lanes), "poison")
        one = self.b.insert_element(poison, v, ir.Constant(I32, 0))
        return self.b.shuffle_vector(one, poison,
                                     ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    def expr_Broadcast(self, e):
        return self.broadcast(self.expr(e.value), e.lanes)

    def expr_Ramp(self, e):
        base = self.broadcast(self.expr(e.base), e.lanes)
        stride = self.broadcast(self.expr(e.stride), e.lanes)
        ty = base.type
        if e.base.dtype.is_float:
            steps = ir.Constant(ty, [ir.Constant(ty.element, float(i)) for i in range(e.lanes)])
            return self.b.fadd(base, self.b.fmul(stride, steps))
        steps = ir.Constant(ty, [ir.Constant(ty.element, i) for i in range(e.lanes)])
        return self.b.add(base, self.b.mul(stride, steps))

    # ---- memory ----------------------------------------------------------------------------
    def element_pointer(self, buffer, index: ir.Value, index_dtype: DType) -> ir.Value:
        """Address of element `index` (a scalar) of the 1-D `buffer`."""
        if index.type != I64:
            index = self.b.sext(index, I64) if index_dtype.is_int else self.b.zext(index, I64)
        base = self.expr_Var(buffer.data)
        return self.b.gep(base, [index], source_etype=memory_type(buffer.dtype.element_of()))

    def _flat_index(self, buffer, indices):
        if len(indices) != 1:
            raise InternalError(f"llvm codegen: access to {buffer.name} has {len(indices)} "
                                "indices; storage flattening must run first")
        index = indices[0]
        if not kir.is_const_int(buffer.elem_offset, 0):
            index = index + buffer.elem_offset
        return index

    def access_align(self, buffer, base) -> int:
        """The alignment in bytes of the access at element `base` of `buffer`: the buffer's
        data_alignment as far as the known multiples of `base` and of its elem_offset keep it."""
        elem = buffer.dtype.element_of().bytes
        offset = buffer.elem_offset
        factor = known_multiple(base)
        factor = math.gcd(factor, offset.value if isinstance(offset, kir.IntImm)
                          else buffer.offset_factor)
        align = elem * (factor & -factor) if factor else buffer.data_alignment
        return max(elem, min(buffer.data_alignment, align, 64))  # the runtime guarantees 64

    def _contiguous_base(self, index):
        if isinstance(index, kir.Ramp) and kir.is_const_int(index.stride, 1):
            return index.base
        return None

    def expr_BufferLoad(self, e):
        buffer, dtype = e.buffer, e.dtype
        index = self._flat_index(buffer, e.indices)
        elem = buffer.dtype.element_of()
        if index.dtype.lanes == 1 or self._contiguous_base(index) is not None:
            base = index if index.dtype.lanes == 1 else self._contiguous_base(index)
            ptr = self.element_pointer(buffer, self.expr(base), base.dtype)
            value = self.b.load(ptr, typ=memory_type(dtype), align=self.access_align(
                buffer, e.indices[0] if index.dtype.lanes == 1 else
                self._contiguous_base(e.indices[0])))
            self._tag(value, buffer)
        elif (shuffled := self._shuffled_load(buffer, dtype, index)) is not None:
            value = shuffled
        else:  # gather, one lane at a time
            idx = self.expr(index)
            value = ir.Constant(memory_type(dtype), ir.Undefined)
            for lane in range(index.dtype.lanes):
                i = self.b.extract_element(idx, ir.Constant(I32, lane))
                ptr = self.element_pointer(buffer, i, index.dtype)
                one = self.b.load(ptr, typ=memory_type(elem), align=elem.bytes)
                self._tag(one, buffer)
                value = self.b.insert_element(value, one, ir.Constant(I32, lane))
        if dtype.is_bool:
            value = self.b.trunc(value, llvm_type(dtype))
        return value

    def _shuffled_load(self, buffer, dtype, index):
        """A vector load whose lanes are S + c_i (`lane_offsets`) as one contiguous load and
        a shufflevector: of the aligned block of B elements that holds every lane (B a power
        of two, at most 64) when S is a multiple of B and the buffer holds whole blocks (so
        the block is in bounds), else of just the elements from S + min c_i to
        S + max c_i when they are fewer than twice the lanes; None otherwise (the caller
        gathers)."""
        split = lane_offsets(index)
        if split is None or buffer.dtype.lanes != 1:
            return None
        scalar, offsets = split
        scalar, k = constant_term(scalar)
        offsets = [c + k for c in offsets]
        lo, hi = min(offsets), max(offsets)
        block = 1 << (hi - lo).bit_length()
        while lo >= 0 and lo // block != hi // block:
            block *= 2
        size = buffer.shape[0] if len(buffer.shape) == 1 else None
        if (lo >= 0 and block <= 64 and kir.is_const_int(buffer.elem_offset, 0)
                and isinstance(size, kir.IntImm) and size.value % block == 0
                and known_multiple(scalar) % block == 0):
            first = lo // block * block
            start, width = scalar + first if first else scalar, block
            mask = [c - first for c in offsets]
        elif hi - lo < 2 * len(offsets):
            start, width = scalar + lo if lo else scalar, hi - lo + 1
            mask = [c - lo for c in offsets]
        else:
            return None
        elem = memory_type(dtype.element_of())
        ptr = self.element_pointer(buffer, self.expr(start), start.dtype)
        window = self.b.load(ptr, typ=ir.VectorType(elem, width),
                             align=self.access_align(buffer, start))
        self._tag(window, buffer)
        if width == len(mask) and mask == list(range(width)):
            return window
        return self.b.shuffle_vector(window, TextConstant(window.type, "poison"),
                                     ir.Constant(ir.VectorType(I32, len(mask)), mask))

    def store(self, s) -> None:
        buffer = s.buffer
        index = self._flat_index(buffer, s.indices)
        elem = buffer.dtype.element_of()
        value = self.expr(s.value)
        if s.value.dtype.is_bool:
            value = self.b.zext(value, memory_type(s.value.dtype))
        if index.dtype.lanes == 1 or self._contiguous_base(index) is not None:
            base = index if index.dtype.lanes == 1 else self._contiguous_base(index)
            ptr = self.element_pointer(buffer, self.expr(base), base.dtype)
            align = self.access_align(buffer, s.indices[0] if index.dtype.lanes == 1 else
                                      self._contiguous_base(s.indices[0]))
            self._tag(self.b.store(value, ptr, align=align), buffer)
            return
        idx = self.expr(index)
        if s.value.dtype.lanes == 1:
            value = self.broadcast(value, index.dtype.lanes)
        for lane in range(index.dtype.lanes):
            i = self.b.extract_element(idx, ir.Constant(I32, lane))
            ptr = self.element_pointer(buffer, i, index.dtype)
            one = self.b.extract_element(value, ir.Constant(I32, lane))
            self._tag(self.b.store(one, ptr, align=elem.bytes), buffer)

    def _tag(self, instr, buffer) -> None:
        tag = self.ctx.tbaa(buffer.data)
        if tag is not None:
            instr.set_metadata("tbaa", tag)

    def expr_Call(self, e):
        return self.call_intrinsic(e)


