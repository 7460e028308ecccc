"""The CUDA dialect: CUDA C kernels (`extern "C" __global__`), `__shared__` arrays,
`__syncthreads()`, blockIdx/threadIdx, half (cuda_fp16.h) and nv_bfloat16 (cuda_bf16.h)
elements computed in float, warp shuffles (`__shfl_sync` and friends) for the
`tir.tvm_warp_*` intrinsics. The file frame is codegen_templates/cuda/."""
from __future__ import annotations

import math

from ...ir.dtype import DType
from ...ir.errors import UnsupportedOpError
from ...tir import expr as E
from .device import GPUPrinter

_INT_TYPES = {(8, False): "signed char", (8, True): "unsigned char", (16, False): "short",
              (16, True): "unsigned short", (32, False): "int", (32, True): "unsigned int",
              (64, False): "int64_t", (64, True): "uint64_t"}
_SHUFFLE = {"tir.tvm_warp_shuffle": "__shfl_sync", "tir.tvm_warp_shuffle_down":
            "__shfl_down_sync", "tir.tvm_warp_shuffle_up": "__shfl_up_sync"}


class CUDAPrinter(GPUPrinter):
    dialect = "CUDA"
    shared_qualifier = "__shared__ "
    param_restrict = " __restrict__"
    helper_qualifier = "__device__ inline"

    def value_type(self, t: DType) -> str:
        if t.is_handle:
            return "void*"
        if t.is_bool:
            return "bool"
        if t.is_float:
            return "double" if t.bits == 64 else "float"
        if t.is_integer:
            return _INT_TYPES[(max(t.bits, 8), t.is_uint)]
        raise UnsupportedOpError(f"CUDA codegen has no type for {t}")

    def storage_type(self, t: DType) -> str:
        if t.is_bool:
            return "signed char"
        if t.is_float and t.bits == 16:
            self.helpers.add("bf16" if t.is_bfloat else "f16")
            return "nv_bfloat16" if t.is_bfloat else "half"
        return self.value_type(t.element_of())

    def thread_index(self, tag: str) -> str:
        return f"((int){tag})"

    def barrier(self, scope: str) -> str:
        return "__syncthreads();" if scope in ("shared", "warp") else "__threadfence();"

    def expr_FloatImm(self, e: E.FloatImm) -> str:

        if math.isinf(e.value) and e.dtype.bits != 64:
            return "__int_as_float(0x7f800000)" if e.value > 0 else "__int_as_float(0xff800000)"
        if math.isnan(e.value) and e.dtype.bits != 64:
            return "__int_as_float(0x7fc00000)"
        if math.isinf(e.value) or math.isnan(e.value):
            bits = "0x7ff0000000000000" if math.isinf(e.value) else "0x7ff8000000000000"
            sign = "-" if math.isinf(e.value) and e.value < 0 else ""
            return f"({sign}__longlong_as_double({bits}LL))"
        return super().expr_FloatImm(e)

    def min_max(self, op: str, dtype: DType) -> str:
        if dtype.is_float:
            return ("fmin" if op == "min" else "fmax") + ("" if dtype.bits == 64 else "f")
        return op

    def from_half(self, text: str, kind: str) -> str:
        self.helpers.add(kind)
        return f"__bfloat162float({text})" if kind == "bf16" else f"__half2float({text})"

    def to_half(self, value: str, kind: str) -> str:
        self.helpers.add(kind)
        return f"__float2bfloat16({value})" if kind == "bf16" else f"__float2half({value})"

    def warp_call(self, e: E.Call) -> str:
        if e.op == "tir.tvm_warp_activemask":
            return "__activemask()"
        mask, value, lane, width, _ = (self.expr(a) for a in e.args)
        return f"{_SHUFFLE[e.op]}({mask}, {value}, {lane}, {width})"
