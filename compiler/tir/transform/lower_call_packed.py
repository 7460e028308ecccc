"""lower_call_packed: a Buffer argument of `tir.call_packed` becomes a DLTensor built on the
stack (TVM's `tvm_stack_make_array`).

Before: packed-form PrimFuncs (make_packed_api ran; attr "tir.device_id" names the device-id
Var or is None, attr "target" gives the device type) whose `tir.call_packed` calls may take
Buffers (compiler.tir.call_packed, te.extern bodies).
After: every such argument is

    tir.make_dltensor(buf.data, device_type, device_id, code, bits, lanes, *buf.shape)

(a handle, passed as a DLTensor*), describing the buffer as compact at byte_offset 0 on the
function's device (device id 0 when the function has no tensor argument). No Call takes a
Buffer any more. A buffer with strides or a non-zero elem_offset cannot be described so and
raises UnsupportedOpError. Functions that are not packed are left alone.
"""
from __future__ import annotations

from ...ir import IRModule
from ...ir.dtype import BOOL, handle, int64
from ...ir.errors import UnsupportedOpError
from .. import Buffer, Call, IRMutator, cast, const, is_const_int
from .common import map_funcs


def lower_call_packed(mod: IRModule) -> IRModule:
    return map_funcs(mod, lambda f: _LowerCallPacked(f).visit_func(f)
                     if f.attrs.get("calling_conv") == "packed" else f)


def is_dltensor(value) -> bool:
    """Whether a handle argument of call_packed is a DLTensor* made here; codegens pass it as
    a DLTensorPtr and every other handle (a buffer's data, as a kernel launch passes) as an
    OpaquePtr, as TVM's host code."""
    return isinstance(value, Call) and value.op == "tir.make_dltensor"


class _LowerCallPacked(IRMutator):
    def __init__(self, func):
        target = func.attrs.get("target")
        self.symbol = func.attrs.get("global_symbol", "?")
        self.device_type = const(getattr(target, "device_type", 1))
        dev = func.attrs.get("tir.device_id")
        self.device_id = dev if dev is not None else const(0)

    def visit_Call(self, e: Call):
        e = self.generic_visit(e)
        if e.op != "tir.call_packed" or not any(isinstance(a, Buffer) for a in e.args):
            return e
        args = tuple(self.make_dltensor(e, a) if isinstance(a, Buffer) else a for a in e.args)
        return Call(e.dtype, e.op, args)

    def make_dltensor(self, call: Call, buf: Buffer) -> Call:
        if buf.strides or not is_const_int(buf.elem_offset, 0):
            raise UnsupportedOpError(
                f"{self.symbol}: buffer '{buf.name}' passed to {call.args[0]} has strides or "
                "an element offset; call_packed passes compact buffers at offset 0 only")
        dt = buf.dtype
        bits = 8 if dt.code == BOOL else dt.bits
        shape = tuple(cast(int64, s) for s in buf.shape)
        return Call(handle, "tir.make_dltensor",
                    (buf.data, self.device_type, self.device_id, const(dt.code), const(bits),
                     const(dt.lanes)) + shape)
