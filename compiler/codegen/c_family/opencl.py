"""The OpenCL C 1.2 dialect: `__kernel` functions over `__global` buffers, `__local` arrays,
`barrier(CLK_LOCAL_MEM_FENCE)`, get_group_id/get_local_id, overloaded math (no `f` suffix),
float16 elements through vload_half/vstore_half (no cl_khr_fp16 needed). The file frame is
codegen_templates/opencl/."""
from __future__ import annotations

from ...ir.dtype import DType
from ...ir.errors import UnsupportedOpError
from .device import _AXIS, GPUPrinter
from .printer_expr import _CLASSIFY

_INT_TYPES = {(8, False): "char", (8, True): "uchar", (16, False): "short",
              (16, True): "ushort", (32, False): "int", (32, True): "uint",
              (64, False): "long", (64, True): "ulong"}


class OpenCLPrinter(GPUPrinter):
    dialect = "OpenCL"
    shared_qualifier = "__local "
    global_qualifier = "__global "
    param_restrict = " restrict"
    helper_qualifier = "static inline"

    def value_type(self, t: DType) -> str:
        if t.is_handle:
            return "void*"
        if t.is_bool:
            return "int"
        if t.is_float:
            if t.bits == 64:
                self.helpers.add("f64")
                return "double"
            return "float"
        if t.is_integer:
            return _INT_TYPES[(max(t.bits, 8), t.is_uint)]
        raise UnsupportedOpError(f"OpenCL codegen has no type for {t}")

    def storage_type(self, t: DType) -> str:
        if t.is_bool:
            return "char"
        if t.is_float and t.bits == 16:
            if t.is_bfloat:
                raise UnsupportedOpError("OpenCL C has no bfloat16 type; use float16 or float32")
            return "half"
        return self.value_type(t.element_of())

    def thread_index(self, tag: str) -> str:
        fn = "get_group_id" if tag.startswith("blockIdx") else "get_local_id"
        return f"((int){fn}({_AXIS[tag[-1]]}))"

    def barrier(self, scope: str) -> str:
        fence = "CLK_LOCAL_MEM_FENCE" if scope in ("shared", "warp") else "CLK_GLOBAL_MEM_FENCE"
        return f"barrier({fence});"

    def math_call(self, name: str, dtype: DType, args) -> str:
        text = ", ".join(self.expr(a) for a in args)
        if name in _CLASSIFY:
            return f"({name}({text}) != 0)"
        return f"{name}({text})"

    def min_max(self, op: str, dtype: DType) -> str:
        return ("f" + op) if dtype.is_float else op

    def load_half(self, buffer, indices, kind: str) -> str:
        return f"vload_half(0, &{self.element(buffer, indices)})"

    def store_half(self, buffer, indices, value: str, kind: str) -> str:
        return f"vstore_half({value}, 0, &{self.element(buffer, indices)});"

    def from_half(self, text: str, kind: str) -> str:
        raise UnsupportedOpError("OpenCL C 1.2 reads float16 only from memory (vload_half)")

    def to_half(self, value: str, kind: str) -> str:
        raise UnsupportedOpError("OpenCL C 1.2 writes float16 only to memory (vstore_half)")

    def expr_Cast(self, e):
        dst = e.dtype
        if dst.is_float and dst.bits == 16:
            return f"(float)({self.expr(e.value)})"
        return super().expr_Cast(e)
