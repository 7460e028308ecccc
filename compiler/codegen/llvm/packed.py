"""Runtime-facing pieces of the LLVM host codegen: calls to runtime services, raising errors
from AssertStmt, and `tir.call_packed`.

Services are reached as the C target reaches them (compiler/codegen/__init__.py): in a shared
library through weak `void* __<Service>` context slots the loader fills after dlopen; in a
system library by direct calls. `TVMFFIErrorSetRaisedFromCStrParts` is always a direct call.
"""
from __future__ import annotations

from typing import List

from llvmlite import ir

from microruntime.abi import TypeIndex

from ...ir.dtype import DType
from ...ir.errors import InternalError
from ...tir import Call, IntImm, PrimExpr, StringImm
from ...tir.transform.lower_call_packed import is_dltensor
from .text import (
    DTYPE_SLOT,
    HELPERS,
    RAISE_PARTS,
    RAISE_VALUES,
    REF_SLOT,
    SLOT_BYTES,
    VALUE_SLOT,
)
from .types import ANY, I8, I32, I64, PTR, SERVICES, global_variable

# Services reached through context slots outside system-lib mode (the loader fills them).
# A constant message part this long or longer is stored once and passed to `__kiln_raise` as
# its `ref` (the function signature that each argument check of a function quotes).
REF_MIN_CHARS = 24
CONTEXT_SLOTS = ("TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch",
                 "TVMBackendParallelBarrier", "TVMFFIFunctionCall", "TVMFFIEnvModLookupFromImports",
                 "TVMFFIHandleInitOnce")
# TVMFFIAny type indices for call_packed arguments.
INT, BOOL, FLOAT = TypeIndex.INT, TypeIndex.BOOL, TypeIndex.FLOAT
DLTENSOR_PTR, RAW_STR = TypeIndex.DLTENSOR_PTR, TypeIndex.RAW_STR


class PackedEmitter:
    """Runtime half of the function emitter."""

    def call_service(self, name: str, args: List[ir.Value]) -> ir.Value:
        ret, arg_types = SERVICES[name]
        if self.ctx.system_lib or name not in CONTEXT_SLOTS:
            return self.b.call(self.ctx.declare(name), args)
        slot = self.ctx.module.globals.get("__" + name)
        if slot is None:
            slot = global_variable(self.ctx.module, PTR, "__" + name)
            slot.linkage = "weak"
            slot.initializer = ir.Constant(PTR, None)
        fn = self.b.load(slot, typ=ir.FunctionType(ret, arg_types).as_pointer(), align=8)
        return self.b.call(fn, args)

    # ---- errors ----------------------------------------------------------------------------
    def raise_error(self, kind: str, message) -> None:
        """Records `kind: ''.join(message)` through TVMFFIErrorSetRaisedFromCStrParts and
        returns -1 from the function being emitted (freeing its live workspaces). A message
        of constant parts and at most RAISE_VALUES integers or dtype names is one call of
        `__kiln_raise` with a constant template (text.py); any other builds its parts here."""
        template = self._message_template(message)
        if template is not None:
            text, n, values, ref = template
            values += [ir.Constant(I64, 0)] * (RAISE_VALUES - len(values))
            self.b.call(self.ctx.declare(*HELPERS["__kiln_raise"]),
                        [self.ctx.cstring(kind), self.ctx.cstring(text), ir.Constant(I32, n),
                         *values, ref])
        else:
            parts = [self._message_part(p) for p in message]
            array = self.entry_alloca(ir.ArrayType(PTR, max(len(parts), 1)), align=8)
            for i, p in enumerate(parts):
                slot = self.b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, i)],
                                  inbounds=True, source_etype=array.allocated_type)
                self.b.store(p, slot, align=8)
            self.b.call(self.ctx.declare("TVMFFIErrorSetRaisedFromCStrParts"),
                        [self.ctx.cstring(kind), array, ir.Constant(I32, len(parts))])
        self.error_return(ir.Constant(I32, -1))

    def _message_template(self, message):
        """(template text, part count, runtime values, ref) of `message` for `__kiln_raise`,
        or None (no IR emitted then). The longest constant part of REF_MIN_CHARS or more is
        passed as `ref` (stored once, shared by the messages that quote it), the others are
        written into the template."""
        kinds = [_template_kind(p) for p in message]
        if None in kinds or len(kinds) > RAISE_PARTS or \
                sum(k in (VALUE_SLOT, DTYPE_SLOT) for k in kinds) > RAISE_VALUES:
            return None
        texts = [k for k in kinds if isinstance(k, str)]
        if any("\0" in t or (len(t) == 1 and t.encode() in SLOT_BYTES.values()) for t in texts):
            return None
        shared = max(texts, key=len, default="")
        ref = None
        pieces, values = [], []
        for kind, part in zip(kinds, message):
            if kind == DTYPE_SLOT or kind == VALUE_SLOT:
                values.append(self.packed_dtype(*part.args) if kind == DTYPE_SLOT
                              else self._as_i64(part))
                kind = SLOT_BYTES[kind].decode()
            elif ref is None and kind == shared and len(kind) >= REF_MIN_CHARS:
                ref, kind = self.ctx.cstring(kind), SLOT_BYTES[REF_SLOT].decode()
            pieces.append(kind)
        return "\0".join(pieces), len(pieces), values, ref or ir.Constant(PTR, None)

    def _as_i64(self, part) -> ir.Value:
        """An integer or float message part as the C target prints it: (int64_t)value."""
        value = self.expr(part)
        if part.dtype.is_float:
            return self.cast(value, part.dtype, DType(0, 64))
        if value.type != I64:
            return self.b.zext(value, I64) if part.dtype.is_uint or part.dtype.is_bool \
                else self.b.sext(value, I64)
        return value

    def _message_part(self, part) -> ir.Value:
        if isinstance(part, str):
            return self.ctx.cstring(part)
        if not isinstance(part, PrimExpr):
            raise InternalError(f"llvm codegen: message part {part!r} is not a str or expression")
        if isinstance(part, StringImm) or part.dtype.is_handle:
            return self.expr(part)
        buf = self.entry_alloca(ir.ArrayType(I8, 24), align=8)
        self.b.call(self.ctx.declare(*HELPERS["__kiln_i64_to_str"]), [buf, self._as_i64(part)])
        return buf

    # ---- call_packed -----------------------------------------------------------------------
    def call_packed(self, e) -> ir.Value:
        """`tir.call_packed(name, args...)`: the function is looked up once through the library
        context (imports, then globals) into a per-site cache, filled by TVMFFIHandleInitOnce
        (thread-safe inside parallel loops, as TVM's LLVM codegen) and read with acquire loads.
        A failure returns its status from the calling function at once (as TVM's CPU codegen
        does); the value is the status, 0."""
        rc, _ = self._packed_call(e)
        return self._fit(rc, True, e.dtype)

    def call_trace_packed(self, e) -> ir.Value:
        """`tir.call_trace_packed(name, args..., value)`: calls `name` as call_packed does;
        the value is what the function returned (an Int, Bool or Float, converted to the call's
        dtype), or `value` when it returned anything else (None)."""
        _, stack = self._packed_call(e)
        result = self._any_slot(stack, len(e.args) - 1)
        field = [self.b.gep(result, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                            source_etype=ANY) for k in (0, 2)]
        index = self.b.load(field[0], typ=I32, align=8)
        payload = self.b.load(field[1], typ=I64, align=8)
        from_int = self.cast(payload, DType(0, 64), e.dtype)
        from_float = self.cast(self.b.bitcast(payload, ir.DoubleType()), DType(2, 64), e.dtype)
        traced = self.expr(e.args[-1])
        is_int = self.b.or_(self.b.icmp_signed("==", index, ir.Constant(I32, INT)),
                            self.b.icmp_signed("==", index, ir.Constant(I32, BOOL)))
        is_float = self.b.icmp_signed("==", index, ir.Constant(I32, FLOAT))
        return self.b.select(is_int, from_int, self.b.select(is_float, from_float, traced))

    def _packed_call(self, e):
        """(status, argument stack) of a call_packed-like call (see call_packed); the result
        Any is the stack's slot after the arguments."""
        if not e.args or not isinstance(e.args[0], StringImm):
            raise InternalError(f"llvm codegen: {e} needs the function name as a StringImm")
        name, args = e.args[0].value, e.args[1:]
        if any(not isinstance(a, PrimExpr) for a in args):
            raise InternalError(f"llvm codegen: {e} still takes a Buffer; run "
                                "lower_call_packed first")
        stack = self.entry_alloca(ir.ArrayType(ANY, len(args) + 1), align=8)
        for i, a in enumerate(args):
            self._store_any(stack, i, a)
        self._store_any(stack, len(args), None)
        cache = global_variable(self.ctx.module, PTR, self.ctx.unique(f"__packed.{name}"))
        cache.linkage = "internal"
        cache.initializer = ir.Constant(PTR, None)
        cache.align = 8
        lookup = self.fn.append_basic_block("packed_lookup")
        call = self.fn.append_basic_block("packed_call")
        done = self.fn.append_basic_block("packed_done")
        cached = self.b.load_atomic(cache, "acquire", 8, typ=PTR)
        first = self.b.block
        self.b.cbranch(self.b.icmp_unsigned("==", cached, ir.Constant(PTR, None)), lookup, call)
        self.b.position_at_end(lookup)
        rc_lookup = self.call_service("TVMFFIHandleInitOnce", [cache, self._lookup_function(name)])
        looked_up = self.b.load_atomic(cache, "acquire", 8, typ=PTR)
        self.b.cbranch(self.b.icmp_signed("==", rc_lookup, ir.Constant(I32, 0)), call, done)
        self.b.position_at_end(call)
        handle = self.b.phi(PTR)
        handle.add_incoming(cached, first)
        handle.add_incoming(looked_up, lookup)
        result = self._any_slot(stack, len(args))
        rc_call = self.call_service("TVMFFIFunctionCall",
                                    [handle, stack, ir.Constant(I32, len(args)), result])
        call_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        rc = self.b.phi(I32)
        rc.add_incoming(rc_lookup, lookup)
        rc.add_incoming(rc_call, call_end)
        with self.b.if_then(self.b.icmp_signed("!=", rc, ir.Constant(I32, 0)), likely=False):
            self.error_return(rc)  # the callee (or the lookup) recorded the error
        return rc, stack

    def _lookup_function(self, name: str) -> ir.Function:
        """`internal i32 (ptr out)`: looks `name` up through the library context into *out; the
        initializer TVMFFIHandleInitOnce runs once per call site (one function per name)."""
        symbol = f"__kiln_lookup.{name}"
        fn = self.ctx.module.globals.get(symbol)
        if fn is not None:
            return fn
        fn = ir.Function(self.ctx.module, ir.FunctionType(I32, [PTR]), symbol)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        outer, self.b = self.b, ir.IRBuilder(fn.append_basic_block("entry"))
        try:
            ctx_value = self.b.load(self.ctx.library_ctx(), typ=PTR, align=8)
            self.b.ret(self.call_service("TVMFFIEnvModLookupFromImports",
                                         [ctx_value, self.ctx.cstring(name), fn.args[0]]))
        finally:
            self.b = outer
        return fn

    def _any_slot(self, stack, i):
        return self.b.gep(stack, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True,
                          source_etype=stack.allocated_type)

    def _store_any(self, stack, i, arg) -> None:
        slot = self._any_slot(stack, i)
        field = [self.b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                            source_etype=ANY) for k in range(3)]
        if arg is None:
            index, payload = 0, None
        elif isinstance(arg, StringImm):
            index, payload = RAW_STR, self.ctx.cstring(arg.value)
        else:
            dt = arg.dtype
            value = self.expr(arg)
            if dt.is_handle:
                # a DLTensor made on the stack, else an opaque pointer (a kernel's buffer data)
                index = DLTENSOR_PTR if is_dltensor(arg) else TypeIndex.OPAQUE_PTR
                payload = value
            elif dt.is_float:
                index, payload = FLOAT, self.cast(value, dt, DType(2, 64))
            elif dt.is_bool:
                index, payload = BOOL, self.b.zext(value, I64)
            else:
                index = INT
                payload = value if value.type == I64 else (
                    self.b.sext(value, I64) if dt.is_int else self.b.zext(value, I64))
        self.b.store(ir.Constant(I32, index), field[0], align=8)
        self.b.store(ir.Constant(I32, 0), field[1], align=4)
        self.b.store(ir.Constant(I64, 0), field[2], align=8)
        if payload is not None:
            self.b.store(payload, field[2], align=8)


def _template_kind(part):
    """A message part in a `__kiln_raise` template: its constant text, VALUE_SLOT, DTYPE_SLOT,
    or None (it cannot be in one)."""
    if isinstance(part, str):
        return part
    if isinstance(part, StringImm):
        return part.value
    if isinstance(part, IntImm):
        return str(int(part.value))
    if isinstance(part, Call) and part.op == "tir.dtype_name":
        return DTYPE_SLOT
    if isinstance(part, PrimExpr) and not part.dtype.is_handle:
        return VALUE_SLOT
    return None

