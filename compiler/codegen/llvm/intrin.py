"""Intrinsic calls (`Call` nodes, table in compiler/ir/op.py) → LLVM, for the LLVM host codegen.

Math uses LLVM intrinsics where LLVM has a portable one and libm otherwise (float16 and
bfloat16 are computed in float32; libm calls on vectors are made lane by lane); float32 exp,
sigmoid and erf are inline arithmetic (approx_math.py) so that they vectorize. The packed-API
intrinsics read `TVMFFIAny` and `DLTensor` fields; runtime services go through `self.service`.
"""
from __future__ import annotations

from llvmlite import ir

from microruntime.abi import OBJECT_HEADER_BYTES, TypeIndex

from ... import tir as kir
from ...ir.dtype import DType
from ...ir.errors import InternalError, UnsupportedOpError
from ...tir.transform.make_packed_api import check_tensor_table
from .approx_math import ApproxMath
from .expr import splat, with_element
from .text import HELPERS
from .types import ANY, DLTENSOR, F32, F64, I1, I8, I16, I32, I64, PTR, llvm_type, memory_type

# tir.<name> -> LLVM intrinsic base name (overloaded on the float type).
LLVM_MATH = {"exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
             "log10": "llvm.log10", "sqrt": "llvm.sqrt", "fabs": "llvm.fabs",
             "floor": "llvm.floor", "ceil": "llvm.ceil", "round": "llvm.round",
             "trunc": "llvm.trunc", "nearbyint": "llvm.nearbyint", "sin": "llvm.sin",
             "cos": "llvm.cos", "pow": "llvm.pow", "copysign": "llvm.copysign"}
LIBM = ("exp10", "log1p", "expm1", "tanh", "erf", "tan", "asin", "acos", "atan", "sinh", "cosh",
        "asinh", "acosh", "atanh", "atan2", "fmod", "hypot")

# DLTensor field -> (struct path, in-memory type, signed?)
DLTENSOR_FIELDS = {"data": ((0,), PTR, False), "device_type": ((1, 0), I32, True),
                   "device_id": ((1, 1), I32, True), "ndim": ((2,), I32, True),
                   "dtype_code": ((3, 0), I8, False), "dtype_bits": ((3, 1), I8, False),
                   "dtype_lanes": ((3, 2), I16, False), "shape": ((4,), PTR, False),
                   "strides": ((5,), PTR, False), "byte_offset": ((6,), I64, False)}
TENSOR_OBJECT = TypeIndex.TENSOR


def _type_suffix(ty: ir.Type) -> str:
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{_type_suffix(ty.element)}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(ty)]


class IntrinEmitter(ApproxMath):
    """Call half of the function emitter."""

    def call_intrinsic(self, e):
        name = e.op[4:] if e.op.startswith("tir.") else e.op
        method = getattr(self, "intrin_" + name, None)
        if method is not None:
            return method(e)
        if name in LLVM_MATH or name in LIBM or name in ("sigmoid", "rsqrt", "ldexp"):
            return self._math(e, name)
        raise InternalError(f"llvm codegen: no rule for the call {e.op!r} in {e}")

    # ---- math ------------------------------------------------------------------------------
    def unary_intrinsic(self, base: str, *args: ir.Value) -> ir.Value:
        ty = args[0].type
        fn = self.ctx.declare(f"{base}.{_type_suffix(ty)}", ty, [a.type for a in args])
        return self.b.call(fn, list(args), fastmath=self.ctx.fast_math)

    def _libm(self, name: str, *args: ir.Value) -> ir.Value:
        ty = args[0].type
        if isinstance(ty, ir.VectorType):
            out = ir.Constant(ty, ir.Undefined)
            for lane in range(ty.count):
                idx = ir.Constant(I32, lane)
                one = self._libm(name, *[self.b.extract_element(a, idx) for a in args])
                out = self.b.insert_element(out, one, idx)
            return out
        fn = self.ctx.declare(name + ("f" if ty == F32 else ""), ty, [a.type for a in args])
        return self.b.call(fn, list(args), fastmath=self.ctx.fast_math)

    def _math(self, e, name):
        dtype = e.args[0].dtype
        if not dtype.is_float:
            raise UnsupportedOpError(f"{e.op} needs float arguments, got {dtype} in {e}")
        args = [self.expr(a) for a in e.args]
        if name == "ldexp":
            args[1] = self.cast(args[1], e.args[1].dtype, DType(2, dtype.bits, dtype.lanes))
        narrow = dtype.bits == 16
        if narrow:
            args = [self.cast(a, dtype, DType(2, 32, dtype.lanes)) for a in args]
        fm = self.ctx.fast_math
        single = dtype.bits <= 32
        if name == "exp" and single:
            out = self.exp_f32(args[0])
        elif name == "erf" and single:
            out = self.erf_f32(args[0])
        elif name == "tanh" and single:
            out = self.tanh_f32(args[0])
        elif name in LLVM_MATH:
            out = self.unary_intrinsic(LLVM_MATH[name], *args)
        elif name == "sigmoid":
            x = args[0]
            one = splat(x.type, 1.0)
            neg = self.b.fneg(x, flags=fm)
            ex = self.exp_f32(neg) if single else self.unary_intrinsic("llvm.exp", neg)
            out = self.b.fdiv(one, self.b.fadd(one, ex, flags=fm), flags=fm)
        elif name == "rsqrt":
            x = args[0]
            out = self.b.fdiv(splat(x.type, 1.0), self.unary_intrinsic("llvm.sqrt", x), flags=fm)
        elif name == "ldexp":  # x * 2^n, exact for the exponents that matter
            out = self.b.fmul(args[0], self.unary_intrinsic("llvm.exp2", args[1]), flags=fm)
        else:
            out = self._libm(name, *args)
        return self.cast(out, DType(2, 32, dtype.lanes), dtype) if narrow else out

    def _float_class(self, e, pred):
        x = self.expr(e.args[0])
        dtype = e.args[0].dtype
        if not dtype.is_float:
            return splat(llvm_type(e.dtype), 1 if pred == "isfinite" else 0)
        if dtype.is_bfloat:
            x = self.bf16_to_f32(x)
        if pred == "isnan":
            return self.b.fcmp_unordered("uno", x, x)
        ax = self.unary_intrinsic("llvm.fabs", x)
        inf = splat(x.type, float("inf"))
        return self.b.fcmp_ordered("==" if pred == "isinf" else "<", ax, inf)

    def intrin_isnan(self, e):
        return self._float_class(e, "isnan")

    def intrin_isinf(self, e):
        return self._float_class(e, "isinf")

    def intrin_isfinite(self, e):
        return self._float_class(e, "isfinite")

    def intrin_abs(self, e):
        dtype = e.args[0].dtype
        if dtype.is_float:
            return self._math(e, "fabs")
        x = self.expr(e.args[0])
        if not dtype.is_int:
            return x
        neg = self.b.icmp_signed("<", x, splat(x.type, 0))
        return self.b.select(neg, self.b.sub(splat(x.type, 0), x), x)

    # ---- external functions ----------------------------------------------------------------
    def intrin_call_extern(self, e):
        """`name(args...)`, declared from the argument and result types; vectors (a call in a
        vectorized loop) are called lane by lane."""
        name = e.args[0]
        if isinstance(name, kir.Broadcast):  # the call was in a vectorized loop
            name = name.value
        if not isinstance(name, kir.StringImm):
            raise InternalError(f"llvm codegen: {e} needs the function name as a StringImm")
        name, args = name.value, [self.expr(a) for a in e.args[1:]]
        ret = llvm_type(e.dtype)
        if isinstance(ret, ir.VectorType):
            out = ir.Constant(ret, ir.Undefined)
            for lane in range(ret.count):
                idx = ir.Constant(I32, lane)
                lanes = [self.b.extract_element(a, idx) if isinstance(a.type, ir.VectorType)
                         else a for a in args]
                out = self.b.insert_element(out, self._extern_call(name, ret.element, lanes),
                                            idx)
            return out
        return self._extern_call(name, ret, args)

    intrin_call_pure_extern = intrin_call_extern

    def _extern_call(self, name: str, ret: ir.Type, args) -> ir.Value:
        fn = self.ctx.module.globals.get(name)
        wanted = ir.FunctionType(ret, [a.type for a in args])
        if fn is None:
            fn = self.ctx.declare(name, ret, wanted.args)
        elif not isinstance(fn, ir.Function) or fn.function_type != wanted:
            raise UnsupportedOpError(
                f"call_extern: '{name}' is called with the prototype {wanted} but it is already "
                f"declared as {getattr(fn, 'function_type', fn.type)}; cast the arguments so "
                "every call of it has the same types")
        return self.b.call(fn, list(args))

    # ---- control and bits ------------------------------------------------------------------
    def intrin_if_then_else(self, e):
        cond, a, b = e.args
        if cond.dtype.lanes > 1:
            return self.b.select(self.expr(cond), self.expr(a), self.expr(b))
        c = self.expr(cond)
        with self.b.if_else(c) as (then, otherwise):
            with then:
                va, ba = self.expr(a), self.b.block
            with otherwise:
                vb, bb = self.expr(b), self.b.block
        phi = self.b.phi(va.type)
        phi.add_incoming(va, ba)
        phi.add_incoming(vb, bb)
        return phi

    def intrin_likely(self, e):
        return self.expr(e.args[0])

    def intrin_reinterpret(self, e):
        v = self.expr(e.args[0])
        src, dst = e.args[0].dtype, e.dtype
        ty = llvm_type(dst)
        if src.is_handle and not dst.is_handle:
            return self.b.ptrtoint(v, ty)
        if dst.is_handle and not src.is_handle:
            return self.b.inttoptr(v, ty)
        return self.b.bitcast(v, ty)

    def _int_pair(self, e):
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        if b.type != a.type:
            b = self.cast(b, e.args[1].dtype, e.args[0].dtype.with_lanes(e.dtype.lanes))
        return a, b

    def intrin_shift_left(self, e):
        return self.b.shl(*self._int_pair(e))

    def intrin_shift_right(self, e):
        a, b = self._int_pair(e)
        return self.b.ashr(a, b) if e.args[0].dtype.is_int else self.b.lshr(a, b)

    def intrin_bitwise_and(self, e):
        return self.b.and_(*self._int_pair(e))

    def intrin_bitwise_or(self, e):
        return self.b.or_(*self._int_pair(e))

    def intrin_bitwise_xor(self, e):
        return self.b.xor(*self._int_pair(e))

    def intrin_bitwise_not(self, e):
        x = self.expr(e.args[0])
        return self.b.xor(x, splat(x.type, -1))

    # ---- packed API ------------------------------------------------------------------------
    def _any_field(self, e, field, ty):
        args, i = self.expr(e.args[0]), self.expr(e.args[1])
        ptr = self.b.gep(args, [i, ir.Constant(I32, field)], inbounds=True, source_etype=ANY)
        return self.b.load(ptr, typ=ty, align=8 if field == 2 else 4)

    def intrin_any_type_index(self, e):
        return self._fit(self._any_field(e, 0, I32), True, e.dtype)

    def intrin_any_int64(self, e):
        return self._fit(self._any_field(e, 2, I64), True, e.dtype)

    def intrin_any_float64(self, e):
        return self._any_field(e, 2, F64)

    def intrin_any_handle(self, e):
        return self._any_field(e, 2, PTR)

    def intrin_any_tensor(self, e):
        index = self._any_field(e, 0, I32)
        ptr = self._any_field(e, 2, PTR)
        inner = self.b.gep(ptr, [ir.Constant(I64, OBJECT_HEADER_BYTES)], source_etype=I8)
        is_obj = self.b.icmp_signed("==", index, ir.Constant(I32, TENSOR_OBJECT))
        return self.b.select(is_obj, inner, ptr)

    def _fit(self, v, signed, dtype):
        ty = llvm_type(dtype)
        if v.type == ty or ty == PTR:
            return v
        if ty.width < v.type.width:
            return self.b.trunc(v, ty)
        return self.b.sext(v, ty) if signed else self.b.zext(v, ty)

    def intrin_dltensor_get(self, e):
        handle, field = self.expr(e.args[0]), e.args[1].value
        if field not in DLTENSOR_FIELDS:
            raise InternalError(f"llvm codegen: unknown DLTensor field {field!r}")
        path, ty, signed = DLTENSOR_FIELDS[field]
        idx = [ir.Constant(I32, 0)] + [ir.Constant(I32, p) for p in path]
        ptr = self.b.gep(handle, idx, inbounds=True, source_etype=DLTENSOR)
        return self._fit(self.b.load(ptr, typ=ty), signed, e.dtype)

    def intrin_check_tensor_arg(self, e):
        """`__kiln_check_tensor` with the table of what the tensor must be (text.py)."""
        t, h, dev_id, name, sig, device = e.args[:6]
        table = check_tensor_table(e)
        words = self.ctx.constant_array(I64, [ir.Constant(I64, v) for v in table])
        return self.b.call(self.ctx.declare(*HELPERS["__kiln_check_tensor"]),
                           [self._fit(self.expr(t), True, DType(0, 32)), self.expr(h),
                            self._fit(self.expr(dev_id), True, DType(0, 32)), words,
                            self.ctx.cstring(name.value), self.ctx.cstring(device.value),
                            self.ctx.cstring(sig.value)])

    def intrin_handle_is_null(self, e):
        return self.b.icmp_unsigned("==", self.expr(e.args[0]), ir.Constant(PTR, None))

    def intrin_address_of(self, e):
        load = e.args[0]
        index = self._flat_index(load.buffer, load.indices)
        return self.element_pointer(load.buffer, self.expr(index), index.dtype)

    def intrin_dtype_name(self, e):
        """The dtype's name in a stack buffer, spelled as the C target spells it: "float32",
        "int8x4", "bool" (bool of 8 bits), "handle64", "dtype<bits>" for unknown codes."""
        buf = self.entry_alloca(ir.ArrayType(I8, 32), align=8)
        self.b.call(self.ctx.declare(*HELPERS["__kiln_dtype_of"]),
                    [buf, self.packed_dtype(*e.args)])
        return buf

    def packed_dtype(self, code, bits, lanes) -> ir.Value:
        """The i64 `make_packed_api.pack_dtype` makes of the dtype fields (expressions)."""
        packed = None
        for field, shift in ((code, 0), (bits, 8), (lanes, 16)):
            v = self.b.zext(self._fit(self.expr(field), False, DType(0, 32)), I64)
            v = self.b.shl(v, ir.Constant(I64, shift)) if shift else v
            packed = v if packed is None else self.b.or_(packed, v)
        return packed

    def intrin_call_packed(self, e):
        return self.call_packed(e)

    def intrin_call_trace_packed(self, e):
        return self.call_trace_packed(e)

    def intrin_make_dltensor(self, e):
        """A DLTensor (and its shape array) in entry-block stack slots of this call site,
        filled here: strides NULL, byte_offset 0; the value is its address."""
        if len(e.args) < 6:
            raise InternalError(f"llvm codegen: {e} takes at least 6 arguments")
        data = self.expr(e.args[0])
        dev_type, dev_id, code, bits, lanes = (
            self._fit(self.expr(a), True, _dtype_of(t))
            for a, t in zip(e.args[1:6], (I32, I32, I8, I8, I16)))
        dims = e.args[6:]
        tensor = self.entry_alloca(DLTENSOR, align=8)
        shape = ir.Constant(PTR, None)
        if dims:
            shape = self.entry_alloca(ir.ArrayType(I64, len(dims)), align=8)
            for k, d in enumerate(dims):
                slot = self.b.gep(shape, [ir.Constant(I32, 0), ir.Constant(I32, k)],
                                  inbounds=True, source_etype=ir.ArrayType(I64, len(dims)))
                self.b.store(self._fit(self.expr(d), True, _dtype_of(I64)), slot, align=8)
        values = {(0,): data, (1, 0): dev_type, (1, 1): dev_id,
                  (2,): ir.Constant(I32, len(dims)), (3, 0): code, (3, 1): bits, (3, 2): lanes,
                  (4,): shape, (5,): ir.Constant(PTR, None), (6,): ir.Constant(I64, 0)}
        for path, value in values.items():
            idx = [ir.Constant(I32, 0)] + [ir.Constant(I32, p) for p in path]
            field = self.b.gep(tensor, idx, inbounds=True, source_etype=DLTENSOR)
            self.b.store(value, field)
        return tensor

    def intrin_alloc_workspace(self, e):
        tys = (I32, I32, I64, I32, I32)
        args = [self._fit(self.expr(a), True, _dtype_of(t)) for a, t in zip(e.args, tys)]
        return self.call_service("TVMBackendAllocWorkspace", args)

    def intrin_free_workspace(self, e):
        args = [self._fit(self.expr(a), True, _dtype_of(I32)) for a in e.args[:2]]
        ret = self.call_service("TVMBackendFreeWorkspace", args + [self.expr(e.args[2])])
        return self._fit(ret, True, e.dtype)

    def intrin_storage_sync(self, e):
        raise UnsupportedOpError(f"{e.op} is a GPU barrier; the llvm target makes CPU code")


def _dtype_of(ty: ir.Type) -> DType:
    return DType(0, ty.width)


_ = (I1, memory_type, with_element)
