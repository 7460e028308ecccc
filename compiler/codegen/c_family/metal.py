"""The Metal Shading Language dialect: `kernel` functions over `device` buffers
(`[[buffer(i)]]`), scalar arguments in one `constant <kernel>_args_t& arg` struct after the
buffers (TVM's Metal convention), the grid and threadgroup positions as kernel arguments
(`uint3 blockIdx [[threadgroup_position_in_grid]]`, `uint3 threadIdx
[[thread_position_in_threadgroup]]`), `threadgroup` arrays, `threadgroup_barrier`, half and
bfloat elements computed in float, simd shuffles. The file frame is codegen_templates/metal/."""
from __future__ import annotations

import math
from typing import List

from ...ir.dtype import DType
from ...ir.errors import UnsupportedOpError
from ...tir import expr as E
from .device import GPUPrinter
from .printer_expr import _CLASSIFY

_INT_TYPES = {(8, False): "char", (8, True): "uchar", (16, False): "short",
              (16, True): "ushort", (32, False): "int", (32, True): "uint",
              (64, False): "long", (64, True): "ulong"}
_SHUFFLE = {"tir.tvm_warp_shuffle": "simd_shuffle", "tir.tvm_warp_shuffle_down":
            "simd_shuffle_down", "tir.tvm_warp_shuffle_up": "simd_shuffle_up"}


class MetalPrinter(GPUPrinter):
    dialect = "Metal"
    shared_qualifier = "threadgroup "
    global_qualifier = "device "
    helper_qualifier = "inline"

    def value_type(self, t: DType) -> str:
        if t.is_handle:
            return "void*"
        if t.is_bool:
            return "bool"
        if t.is_float:
            if t.bits == 64:
                raise UnsupportedOpError("Metal has no float64; use float32")
            return "float"
        if t.is_integer:
            return _INT_TYPES[(max(t.bits, 8), t.is_uint)]
        raise UnsupportedOpError(f"Metal codegen has no type for {t}")

    def storage_type(self, t: DType) -> str:
        if t.is_bool:
            return "char"
        if t.is_float and t.bits == 16:
            return "bfloat" if t.is_bfloat else "half"
        return self.value_type(t.element_of())

    def kernel_params(self, params) -> (List[str], List[str]):
        """(parameter declarations, fields of the scalar-argument struct)."""
        decls, scalars = [], []
        buffers = [p for p in params if p.dtype.is_handle]
        for i, p in enumerate(buffers):
            decls.append(f"{self.param_type(p)} {self.name_of(p)} [[buffer({i})]]")
        for p in params:
            if not p.dtype.is_handle:
                scalars.append(f"{self.value_type(p.dtype)} {self.name_of(p)}")
        if scalars:
            decls.append(f"constant {self.kernel.attrs['global_symbol']}_args_t& arg "
                         f"[[buffer({len(buffers)})]]")
        decls.append("uint3 blockIdx [[threadgroup_position_in_grid]]")
        decls.append("uint3 threadIdx [[thread_position_in_threadgroup]]")
        return decls, scalars

    def scalar_prologue(self, params) -> List[str]:
        return [f"{self.value_type(p.dtype)} {self.name_of(p)} = arg.{self.name_of(p)};"
                for p in params if not p.dtype.is_handle]

    def thread_index(self, tag: str) -> str:
        return f"((int){tag})"

    def barrier(self, scope: str) -> str:
        flags = "mem_threadgroup" if scope in ("shared", "warp") else "mem_device"
        return f"threadgroup_barrier(mem_flags::{flags});"

    def unroll_pragma(self, n: int) -> str:
        return f"#pragma unroll({n})"

    def expr_FloatImm(self, e: E.FloatImm) -> str:

        if math.isinf(e.value):
            return "INFINITY" if e.value > 0 else "(-INFINITY)"
        if math.isnan(e.value):
            return "NAN"
        return super().expr_FloatImm(e)

    def math_call(self, name: str, dtype: DType, args) -> str:
        text = ", ".join(self.expr(a) for a in args)
        if name in _CLASSIFY:
            return f"({name}({text}) != 0)"
        return f"{name}({text})"

    def min_max(self, op: str, dtype: DType) -> str:
        return ("f" + op) if dtype.is_float else op

    def from_half(self, text: str, kind: str) -> str:
        return f"((float)({text}))"

    def to_half(self, value: str, kind: str) -> str:
        return f"(({'bfloat' if kind == 'bf16' else 'half'})({value}))"

    def warp_call(self, e: E.Call) -> str:
        if e.op == "tir.tvm_warp_activemask":
            return "0xffffffffu"
        _, value, lane, _, _ = (self.expr(a) for a in e.args)
        return f"{_SHUFFLE[e.op]}({value}, (ushort)({lane}))"
