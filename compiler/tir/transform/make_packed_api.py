"""make_packed_api: give every host PrimFunc the TVM-FFI safe-call signature, unpacking and
checking its arguments.

Before: PrimFuncs with attr "global_symbol", `calling_conv` absent or "default", params that are
tensor arguments (in `buffer_map`, 1-D or N-D Buffers whose shapes/strides/elem_offset may hold
symbolic Vars) or scalar Vars (int*, uint*, bool, float*, handle).

After (the **packed form**, the input contract of every host codegen, see compiler/codegen):

- `params == (self_handle: handle, args: handle, num_args: int32, result: handle)`, in that
  order, named so; `buffer_map == ()`. The C signature is
  `int32_t f(void* self_handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)`.
- attrs: `calling_conv = "packed"`, `global_symbol` unchanged, `target` kept, plus
  `"tir.device_id"`: the int32 Var bound to the device id of the first tensor argument (None when
  the function has none), and `"tir.arg_names"`: the argument names of the original signature.
- body, outermost first, a chain of `LetStmt` / `AssertStmt` ending in the original body followed
  by `Return(0)`:
  1. `AssertStmt(num_args == N, "TypeError", ...)`.
  2. per argument i: `LetStmt(<name>.type_index, tir.any_type_index(args, i))` and an
     `AssertStmt(... type ok ..., "TypeError", ...)`; scalars are then bound with
     `LetStmt(param_var, cast(dtype, tir.any_int64(args, i)))` (float params accept Int and
     Float: `tir.any_float64`; handle params `tir.any_handle`). Scalars come before tensors so a
     scalar param used in a shape is checked, not rebound.
  3. per tensor argument: `LetStmt(<name>.handle, tir.any_tensor(args, i))` (a DLTensor*), then
     checks read with `tir.dltensor_get(handle, StringImm(field))`: ndim (ValueError), dtype
     code/bits/lanes (TypeError), `LetStmt(<name>.shape, ...)` and each dimension read as
     `BufferLoad` of an int64 Buffer over that handle: the first occurrence of a shape Var binds
     it (`LetStmt(n, cast(n.dtype, shape[k]))`), every other dimension is asserted equal
     (ValueError); strides: NULL means compact, non-NULL compact buffers are asserted compact
     (dimensions of extent 1 may have any stride), symbolic strides bind from `strides[k]` or
     the compact value (ValueError); byte_offset must be `elem_offset * itemsize` unless
     `elem_offset` is an unbound Var, which it then binds to byte_offset / itemsize after
     asserting byte_offset is a multiple of itemsize * offset_factor (ValueError); device_type
     must equal the target's (ValueError); device_id is
     bound from the first tensor and asserted equal on the others (ValueError); finally
     `LetStmt(buffer.data, tir.dltensor_get(handle, "data"))` and an assert that it is not NULL
     unless the tensor is empty (ValueError).
- a host function of a GPU build (attr "tir.device_type" from split_host_device, not CPU) checks
  its tensors against that device type and, after the checks, first calls
  `tir.call_packed("__tvm_set_device", device_type, device_id)` (TVM 0.27's host code does).
- `AssertStmt.message` parts: `str` literals, integer expressions (printed in decimal) and
  handle expressions that are C strings (`tir.dtype_name(code, bits, lanes)`). Messages read
  like TVM's: "Mismatched A.dtype on argument #0 when calling:\\n  `test_add(A, B, C)`,\\n
  expected float32, but got int32", the signature a part of its own (one string per
  function in the object, however many checks quote it). A failed assert raises an error of
  its kind through `TVMFFIErrorSetRaisedFromCStrParts` and returns -1.
- a tensor of static shape, without strides, at a constant offset and of a dtype int/uint/
  float/bfloat/bool (most tensors of a model) has its checks 3. but the device id's binding
  made by one `AssertStmt(tir.check_tensor_arg(...), "", ())`: the call checks, in the same
  order and with the same messages, against the constants it is given (see
  compiler/tir/intrinsics.py), and records the error itself; an AssertStmt with no message
  parts only returns -1. One helper per library then holds the checks' code and text.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Set

from microruntime.abi import (
    DEVICE_NAMES,
    DTYPE_CODE_NAMES,
    STATIC_OBJECT_BEGIN,
    DataTypeCode,
    TypeIndex,
)

from ...ir import IRModule
from ...ir.dtype import BOOL, FLOAT, HANDLE, DType, boolean, handle, int32, int64
from .. import (
    AssertStmt,
    Buffer,
    Call,
    Evaluate,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Return,
    Select,
    StringImm,
    Var,
    cast,
    const,
    decl_buffer,
    seq,
)

Step = Callable[[object], object]

NONE, INT, BOOL_T, FLOAT_T = TypeIndex.NONE, TypeIndex.INT, TypeIndex.BOOL, TypeIndex.FLOAT
OPAQUE_PTR, DLTENSOR_PTR, TENSOR = TypeIndex.OPAQUE_PTR, TypeIndex.DLTENSOR_PTR, TypeIndex.TENSOR
OBJECT_BEGIN = STATIC_OBJECT_BEGIN


def make_packed_api(mod: IRModule) -> IRModule:
    funcs = {}
    for name, func in mod.items():
        conv = func.attrs.get("calling_conv", "default")
        funcs[name] = _Packer(func, name).run() if conv == "default" else func
    if all(funcs[name] is func for name, func in mod.items()):
        return mod
    return mod.with_functions(funcs)


def _call(dtype, op: str, *args) -> Call:
    return Call(DType.parse(dtype) if isinstance(dtype, str) else dtype, op,
                tuple(a if isinstance(a, PrimExpr) else const(a) for a in args))


def _get(h: Var, field: str, dtype=int32) -> Call:
    return _call(dtype, "tir.dltensor_get", h, StringImm(field))


# tir.check_tensor_arg flags: compare the device id with the first tensor's; a dimension is 0
# (no data pointer needed).
CHECK_DEVICE_ID, MAY_BE_EMPTY = 1, 2
# The dtype codes whose names the helpers spell as `str(dtype)` does.
_NAMED_CODES = {int(c): name for c, name in DTYPE_CODE_NAMES.items()
                if c not in (DataTypeCode.OPAQUE_HANDLE, DataTypeCode.COMPLEX)}


def pack_dtype(code: int, bits: int, lanes: int) -> int:
    """A dtype as one integer: code | bits << 8 | lanes << 16."""
    return code | bits << 8 | lanes << 16


# The words of a tir.check_tensor_arg table before its shape.
CHECK_HEADER = 6


def check_tensor_table(call: Call) -> List[int]:
    """The int64 table a codegen passes its tensor-check helper for `tir.check_tensor_arg`
    `call`: [arg index, ndim, flags, packed dtype (pack_dtype), device type, byte offset]
    (CHECK_HEADER words), the shape, then the compact strides of that shape."""
    index, flags, code, bits, lanes, device_type, offset, *shape = (int(a.value)
                                                                    for a in call.args[6:])
    compact, acc = [], 1
    for d in reversed(shape):
        compact.insert(0, acc)
        acc *= d
    return [index, len(shape), flags, pack_dtype(code, bits, lanes), device_type, offset,
            *shape, *compact]


def _checked_by_table(buf: Buffer) -> bool:
    """Whether `buf` is checked by `tir.check_tensor_arg`: a static shape, compact, a constant
    element offset, a dtype whose name the runtime helper spells the same."""
    dt = buf.dtype
    prefix = _NAMED_CODES.get(dt.code)
    if prefix is None or buf.strides or not isinstance(buf.elem_offset, IntImm) or \
            not all(isinstance(d, IntImm) for d in buf.shape):
        return False
    bits = "" if dt.code == BOOL and dt.bits in (1, 8) else str(dt.bits)
    return str(dt) == prefix + bits + (f"x{dt.lanes}" if dt.lanes != 1 else "")


def _any_of(value: PrimExpr, options) -> PrimExpr:
    cond = None
    for o in options:
        c = value.equal(o) if not isinstance(o, tuple) else value >= o[0]
        cond = c if cond is None else (cond | c)
    return cond


class _Packer:
    def __init__(self, func: PrimFunc, name: str):
        self.func = func
        self.symbol = func.attrs.get("global_symbol", name)
        target = func.attrs.get("target")
        # A GPU build's host function (split_host_device) names its device's type.
        self.device_type = func.attrs.get("tir.device_type", getattr(target, "device_type", 1))
        self.args = Var("args", handle)
        self.num_args = Var("num_args", int32)
        self.steps: List[Step] = []
        self.bound: Set[int] = set()
        self.device_id: Optional[Var] = None
        self.names = [self._arg_name(p) for p in func.params]
        self.signature = f"{self.symbol}({', '.join(self.names)})"

    def _arg_name(self, p: Var) -> str:
        buf = self.func.buffer_of(p)
        return buf.name if buf is not None else p.name

    # ---- building blocks ---------------------------------------------------------------------
    def let(self, var: Var, value: PrimExpr) -> None:
        self.bound.add(id(var))
        self.steps.append(lambda body: LetStmt(var, value, body))

    def check(self, cond: PrimExpr, kind: str, what: str, i: int, expected, got) -> None:
        parts = [f"Mismatched {what} on argument #{i} when calling:\n  `", self.signature,
                 "`,\n  expected "]
        parts += expected if isinstance(expected, list) else [expected]
        parts += [", but got "] + (got if isinstance(got, list) else [got])
        msg = tuple(p if isinstance(p, (str, PrimExpr)) else str(p) for p in parts)
        self.steps.append(lambda body: AssertStmt(cond, kind, msg, body))

    def bind(self, expected: PrimExpr, actual: PrimExpr, what: str, i: int) -> None:
        """Binds `expected` if it is an unbound Var, else asserts it equals `actual`."""
        if isinstance(expected, Var) and id(expected) not in self.bound:
            self.let(expected, cast(expected.dtype, actual))
            return
        exp = expected
        shown = [exp] if not isinstance(exp, IntImm) else [str(exp.value)]
        if isinstance(expected, Var):
            shown = [f"{expected.name} = ", exp]
        self.check(cast(int64, exp).equal(cast(int64, actual)), "ValueError", what, i, shown,
                   actual)

    # ---- the pass ----------------------------------------------------------------------------
    def run(self) -> PrimFunc:
        f = self.func
        n = len(f.params)
        self.steps.append(lambda body: AssertStmt(
            self.num_args.equal(n), "TypeError",
            (f"Expected {n} arguments when calling:\n  `", self.signature, "`,\n  but got ",
             self.num_args), body))
        type_vars = []
        for i in range(n):
            t = Var(f"{self.names[i]}.type_index", int32)
            self.let(t, _call(int32, "tir.any_type_index", self.args, i))
            type_vars.append(t)
        for i, p in enumerate(f.params):
            if f.buffer_of(p) is None:
                self.scalar(i, p, type_vars[i])
        for i, p in enumerate(f.params):
            buf = f.buffer_of(p)
            if buf is not None:
                self.tensor(i, buf, type_vars[i])
        body = seq(f.body, Return(const(0)))
        if self.device_type != 1 and "tir.device_type" in f.attrs:
            # As TVM 0.27's host code: select the device before launching its kernels.
            dev_id = self.device_id if self.device_id is not None else const(0)
            set_device = Call(int32, "tir.call_packed", (StringImm("__tvm_set_device"),
                                                          const(self.device_type), dev_id))
            body = seq(Evaluate(set_device), body)
        for step in reversed(self.steps):
            body = step(body)
        attrs = dict(f.attrs)
        attrs.update({"calling_conv": "packed", "global_symbol": self.symbol,
                      "tir.device_id": self.device_id, "tir.arg_names": tuple(self.names)})
        params = (Var("self_handle", handle), self.args, self.num_args, Var("result", handle))
        return PrimFunc(params, body, (), attrs)

    def scalar(self, i: int, p: Var, t: Var) -> None:
        dt = p.dtype
        if dt.code == HANDLE:
            self.check(_any_of(t, [NONE, OPAQUE_PTR, DLTENSOR_PTR, (OBJECT_BEGIN,)]),
                       "TypeError", "type", i, "a pointer", ["type index ", t])
            self.let(p, _call(handle, "tir.any_handle", self.args, i))
        elif dt.code == FLOAT:
            self.check(_any_of(t, [INT, BOOL_T, FLOAT_T]), "TypeError", "type", i, "float",
                       ["type index ", t])
            value = Select(t.equal(FLOAT_T), _call("float64", "tir.any_float64", self.args, i),
                           cast("float64", _call(int64, "tir.any_int64", self.args, i)))
            self.let(p, cast(dt, value))
        else:
            self.check(_any_of(t, [INT, BOOL_T]), "TypeError", "type", i, str(dt),
                       ["type index ", t])
            raw = _call(int64, "tir.any_int64", self.args, i)
            self.let(p, raw.equal(0).equal(0) if dt.code == BOOL else cast(dt, raw))

    def tensor(self, i: int, buf: Buffer, t: Var) -> None:
        if _checked_by_table(buf):
            self.tensor_by_table(i, buf, t)
            return
        name = buf.name
        # Only a Tensor object or a raw DLTensor* is read as a tensor: any other object (a
        # string, a function) would be misread as a DLTensor.
        self.check(_any_of(t, [DLTENSOR_PTR, TENSOR]), "TypeError",
                   "type", i, "Tensor", ["type index ", t])
        h = Var(f"{name}.handle", handle)
        self.let(h, _call(handle, "tir.any_tensor", self.args, i))
        ndim = _get(h, "ndim")
        self.check(ndim.equal(buf.ndim), "ValueError", f"{name}.ndim", i, str(buf.ndim), ndim)
        self._dtype(i, buf, h)
        shape = decl_buffer((buf.ndim,), "int64", name=f"{name}.shape",
                            data=Var(f"{name}.shape", handle))
        self.let(shape.data, _get(h, "shape", handle))
        dims = [shape[k] for k in range(buf.ndim)]
        for k, expected in enumerate(buf.shape):
            self.bind(expected, dims[k], f"{name}.shape[{k}]", i)
        self._strides(i, buf, h, dims)
        self._offset(i, buf, h)
        dev_type = _get(h, "device_type")
        self.check(dev_type.equal(self.device_type), "ValueError", f"{name}.device_type", i,
                   f"{DEVICE_NAMES.get(self.device_type, '?')} ({self.device_type})", dev_type)
        dev_id = _get(h, "device_id")
        if self.device_id is None:
            self.device_id = Var("dev_id", int32)
            self.let(self.device_id, dev_id)
        else:
            self.check(dev_id.equal(self.device_id), "ValueError", f"{name}.device_id", i,
                       self.device_id, dev_id)
        self.let(buf.data, _get(h, "data", handle))
        empty = None
        for d in dims:
            empty = d.equal(0) if empty is None else (empty | d.equal(0))
        not_null = ~_call(boolean, "tir.handle_is_null", buf.data)
        cond = not_null if empty is None else (not_null | empty)
        self.steps.append(lambda body: AssertStmt(cond, "ValueError", (
            f"{name}.data is NULL on argument #{i} when calling:\n  `", self.signature, "`"),
            body))

    def tensor_by_table(self, i: int, buf: Buffer, t: Var) -> None:
        """A tensor of static shape, compact, at a constant offset: every check of `tensor` but
        the device id's binding is one call of `tir.check_tensor_arg` (one helper per library
        reads a table of what to expect and raises the same messages), then the data."""
        h = Var(f"{buf.name}.handle", handle)
        self.let(h, _call(handle, "tir.any_tensor", self.args, i))
        first = self.device_id is None
        if first:
            self.device_id = Var("dev_id", int32)
        shape = [int(d.value) for d in buf.shape]
        dt = buf.dtype
        device = f"{DEVICE_NAMES.get(self.device_type, '?')} ({self.device_type})"
        flags = (0 if first else CHECK_DEVICE_ID) | (MAY_BE_EMPTY if 0 in shape else 0)
        check = _call(boolean, "tir.check_tensor_arg", t, h, const(0) if first else
                      self.device_id, StringImm(buf.name), StringImm(self.signature),
                      StringImm(device), i, flags, dt.code, 8 if dt.code == BOOL else dt.bits,
                      dt.lanes, self.device_type,
                      const(int(buf.elem_offset.value) * dt.bytes, "int64"),
                      *(const(d, "int64") for d in shape))
        # no message: the helper recorded the error (make_packed_api's docstring)
        self.steps.append(lambda body: AssertStmt(check, "", (), body))
        if first:
            self.let(self.device_id, _get(h, "device_id"))
        self.let(buf.data, _get(h, "data", handle))

    def _dtype(self, i: int, buf: Buffer, h: Var) -> None:
        dt = buf.dtype
        bits = 8 if dt.code == BOOL else dt.bits
        code, nbits, lanes = _get(h, "dtype_code"), _get(h, "dtype_bits"), _get(h, "dtype_lanes")
        ok = code.equal(dt.code) & nbits.equal(bits) & lanes.equal(dt.lanes)
        got = _call(handle, "tir.dtype_name", code, nbits, lanes)
        self.check(ok, "TypeError", f"{buf.name}.dtype", i, str(dt), got)

    def _strides(self, i: int, buf: Buffer, h: Var, dims) -> None:
        name = buf.name
        strides = decl_buffer((buf.ndim,), "int64", name=f"{name}.strides",
                              data=Var(f"{name}.strides", handle))
        self.let(strides.data, _get(h, "strides", handle))
        is_null = _call(boolean, "tir.handle_is_null", strides.data)
        compact: List[PrimExpr] = []
        acc: Optional[PrimExpr] = None
        for d in reversed(dims):
            compact.insert(0, const(1, "int64") if acc is None else acc)
            acc = d if acc is None else acc * d
        for k in range(buf.ndim):
            if not buf.strides:
                cond = is_null | strides[k].equal(compact[k]) | dims[k].equal(1)
                self.check(cond, "ValueError", f"{name}.strides[{k}]", i,
                           ["compact stride ", compact[k]], strides[k])
            else:
                actual = _call(int64, "tir.if_then_else", is_null, compact[k], strides[k])
                self.bind(buf.strides[k], actual, f"{name}.strides[{k}]", i)

    def _offset(self, i: int, buf: Buffer, h: Var) -> None:
        offset = _get(h, "byte_offset", int64)
        eo = buf.elem_offset
        if isinstance(eo, Var) and id(eo) not in self.bound:
            # Whole elements, offset_factor of them at a time (TVM's ArgBinder checks the factor).
            unit = buf.dtype.bytes * buf.offset_factor
            if unit > 1:
                self.check((offset % unit).equal(0), "ValueError", f"{buf.name}.byte_offset", i,
                           f"a multiple of {unit}", offset)
            self.let(eo, cast(eo.dtype, offset // buf.dtype.bytes))
            return
        if isinstance(eo, IntImm):
            expected: PrimExpr = const(eo.value * buf.dtype.bytes, "int64")
        else:
            expected = cast(int64, eo) * buf.dtype.bytes
        shown = "0" if isinstance(eo, IntImm) and eo.value == 0 else expected
        self.check(offset.equal(expected), "ValueError", f"{buf.name}.byte_offset", i, shown,
                   offset)

