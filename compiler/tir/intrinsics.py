"""The intrinsics a `Call` may name, as data: name → (number of args or None if variadic, doc).

Codegens implement every entry they can meet; lowering passes produce the "packed API" and
"runtime service" entries. A Call to a name missing here is rejected by the verifier.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

# Elementwise math on floats (the codegen picks the f32/f64/f16 flavour from the dtype).
MATH_UNARY = ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
              "tanh", "sigmoid", "erf", "fabs", "floor", "ceil", "round", "trunc", "nearbyint",
              "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
              "atanh", "isnan", "isinf", "isfinite")
MATH_BINARY = ("pow", "atan2", "fmod", "copysign", "hypot", "ldexp")

INTRINSICS: Dict[str, Tuple[Optional[int], str]] = {
    **{f"tir.{n}": (1, f"elementwise {n}") for n in MATH_UNARY},
    **{f"tir.{n}": (2, f"elementwise {n}") for n in MATH_BINARY},
    "tir.abs": (1, "absolute value of an int or float"),
    "tir.if_then_else": (3, "cond ? a : b, evaluating only the taken side"),
    "tir.likely": (1, "branch hint; value unchanged"),
    "tir.assume": (1, "(cond: bool) -> a fact that holds where it stands (T.assume), for the "
                      "optimizer; lower_intrin drops the Evaluate holding it"),
    "tir.checked_index": (4, "(index, extent, op: StringImm, axis: IntImm) -> the index "
                             "wrapped into [0, extent) (negative ones count from the end), "
                             "which must lie in [-extent, extent); lower_checked_index makes "
                             "the check an AssertStmt (IndexError) before codegen"),
    "tir.reinterpret": (1, "bit cast to the call's dtype"),
    "tir.shift_left": (2, "a << b"),
    "tir.shift_right": (2, "a >> b (arithmetic for signed)"),
    "tir.bitwise_and": (2, "a & b"),
    "tir.bitwise_or": (2, "a | b"),
    "tir.bitwise_xor": (2, "a ^ b"),
    "tir.bitwise_not": (1, "~a"),
    "tir.popcount": (1, "the number of bits set in an integer (of its width, as unsigned); "
                        "lower_intrin expands it into shifts, masks and a multiply"),
    "tir.call_extern": (None, "(name: StringImm, args...) -> calls the external C function "
                              "`name`, passing each arg as its own C type; the value has the "
                              "call's dtype (tir.call_extern)"),
    "tir.call_pure_extern": (None, "tir.call_extern of a function without side effects"),
    "tir.call_llvm_intrin": (None, "(id: uint32, num_signature: uint32, args...) -> calls the "
                                   "LLVM intrinsic of that ID; the call's dtype and the types "
                                   "of the first num_signature args pick an overloaded one's "
                                   "version (llvm target only)"),
    "tir.call_llvm_pure_intrin": (None, "tir.call_llvm_intrin of an intrinsic without side "
                                        "effects"),
    "tir.prefetch": (4, "(address: handle, rw: 0 read / 1 write, locality 0-3, cache: 1 data "
                        "/ 0 instruction) -> a hint that the address will be accessed soon"),
    "tir.atomic_add": (2, "(address: handle, value) -> adds value to the element at the "
                          "address atomically and returns the element's old value"),
    # ---- packed API (after make_packed_api) --------------------------------------------------
    "tir.any_type_index": (2, "(args, i) -> int32 type index of args[i]"),
    "tir.any_int64": (2, "(args, i) -> args[i].v_int64"),
    "tir.any_float64": (2, "(args, i) -> args[i].v_float64"),
    "tir.any_handle": (2, "(args, i) -> args[i].v_ptr"),
    "tir.any_tensor": (2, "(args, i) -> DLTensor* of args[i] (v_ptr + 24 for Tensor objects)"),
    "tir.dltensor_get": (2, "(tensor, field: StringImm) -> field of a DLTensor; fields: data, "
                            "ndim, dtype_code, dtype_bits, dtype_lanes, shape, strides, "
                            "byte_offset, device_type, device_id"),
    "tir.check_tensor_arg": (None, "(type_index, tensor: DLTensor*, device_id, name, "
                                   "signature, device_text: StringImm, arg index, flags, "
                                   "dtype code, bits, lanes, device_type, byte_offset, "
                                   "shape_0, ..., shape_{ndim-1}) -> bool: the argument is a "
                                   "tensor of exactly that dtype, shape (compact strides or "
                                   "none), byte offset and device type (flags & 1: and device "
                                   "id), with data unless flags & 2; else false, the error "
                                   "recorded as make_packed_api's checks word it"),
    "tir.handle_is_null": (1, "(handle) -> bool"),
    "tir.address_of": (1, "(BufferLoad) -> handle to that element"),
    "tir.tvm_access_ptr": (5, "(type_annotation, data, offset, extent, rw_mask) -> handle to "
                              "element `offset` of the memory at `data` (Buffer.access_ptr); "
                              "storage_flatten makes it a tir.address_of"),
    "tir.type_annotation": (0, "a value standing for its dtype (the element type of "
                               "tir.tvm_access_ptr)"),
    "tir.dtype_name": (3, "(code, bits, lanes) -> the dtype's name as a C string (for messages)"),
    "tir.call_packed": (None, "(name: StringImm, args...) -> int32 status; calls a function "
                              "found through the library context (imports, then globals). "
                              "An arg may be a Buffer until lower_call_packed (a DLTensor* of "
                              "it is passed); ints go as Int, floats as Float (float64), "
                              "handles as DLTensor*, StringImms as raw C strings"),
    "tir.call_trace_packed": (None, "(name: StringImm, args..., value) -> calls `name` as "
                                    "tir.call_packed does (tir.trace); the value is what it "
                                    "returned (an Int or Float, converted to the call's dtype) "
                                    "or `value` when it returned None"),
    "tir.make_dltensor": (None, "(data, device_type, device_id, dtype_code, dtype_bits, "
                                "dtype_lanes, shape_0, ..., shape_{ndim-1}) -> DLTensor* to a "
                                "DLTensor on the calling function's stack (ndim = number of "
                                "shape args, strides NULL, byte_offset 0), valid until it "
                                "returns; made by lower_call_packed"),
    # ---- runtime services --------------------------------------------------------------------
    "tir.alloc_workspace": (5, "(device_type, device_id, nbytes, code_hint, bits_hint) -> handle"),
    "tir.free_workspace": (3, "(device_type, device_id, ptr) -> int32"),
    "tir.throw_last_error": (0, "statement: returns -1 from the packed function (freeing its "
                                "live workspaces) without recording an error; the runtime "
                                "service that just failed already raised it (TVM's "
                                "tvm_throw_last_error)"),
    "tir.parallel_task_id": (0, "int32 index of the running task, inside a parallel launch's body "
                                "(lower_parallel)"),
    "tir.parallel_num_task": (0, "int32 number of tasks of the running parallel launch "
                                 "(penv->num_task)"),
    # ---- GPU ---------------------------------------------------------------------------------
    "tir.storage_sync": (1, "barrier over a memory scope (StringImm 'shared' or 'global')"),
    "tir.tvm_warp_shuffle": (5, "(mask, value, src_lane, width, warp_size): `value` of lane "
                                "src_lane of the caller's group of `width` lanes"),
    "tir.tvm_warp_shuffle_down": (5, "(mask, value, delta, width, warp_size): `value` of the "
                                     "lane `delta` above the caller's in its group"),
    "tir.tvm_warp_shuffle_up": (5, "(mask, value, delta, width, warp_size): `value` of the lane "
                                   "`delta` below the caller's in its group"),
    "tir.tvm_warp_activemask": (0, "uint32 mask of the active lanes of the warp"),
}


def is_intrinsic(name: str) -> bool:
    return name in INTRINSICS


def arity(name: str) -> Optional[int]:
    return INTRINSICS[name][0]
