"""The int8 dot product of x86's VNNI (vpdpbusd) as a tensor intrinsic, and which targets have
it.

vpdpbusd(acc, a, b): per int32 lane i, acc[i] + sum_{k<4} u8(a[4i + k]) * s8(b[4i + k]), no
saturation (each sum of four products fits easily). The intrinsic `dot_u8s8(lanes)` computes

    out[i] += sum_{k<4} int32(data[k]) * int32(kernel[i, k])    (i < lanes: 16, 8 or 4)

with the four uint8 `data` values broadcast to every lane and `kernel` one vector of
lanes x 4 int8 (VNNI's 4-byte groups). AVX-512 VNNI has every width (the 256- and 128-bit ones
with AVX512VL); AVX-VNNI has 256 and 128 bits.

A kernel names an LLVM intrinsic by its ID, and the compiler knows an ID's name only in a
process that looked the name up: a kernel lowered by a forked worker (legalize lowers a
model's kernels so) compiles only where the name was looked up too. `register_intrinsics`
looks up a target's in this process; qnn_layout_nchwc calls it before any kernel is made.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import llvmlite.binding as llvm

from ... import te, tir
from ...target import Target
from ...target.codegen import llvm_lookup_intrinsic_id
from ...tir.buffer import vector_indices

# -mcpu names with AVX-512 VNNI, and with AVX-VNNI only.
_AVX512_VNNI_CPUS = frozenset({
    "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake", "rocketlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "znver4", "znver5", "x86-64-v4"})
_AVX_VNNI_CPUS = frozenset({
    "alderlake", "raptorlake", "meteorlake", "arrowlake", "lunarlake", "gracemont", "sierraforest",
    "grandridge"})


@lru_cache(maxsize=1)
def _host_features() -> frozenset:
    return frozenset(k for k, on in llvm.get_host_cpu_features().items() if on)


def vnni_kind(target=None) -> Optional[str]:
    """"avx512" (AVX-512 VNNI), "avx" (AVX-VNNI) or None for `target` (a Target, its string,
    or None: the current target, else this host). The c target has none (its C compiler is
    not told the ISA)."""
    t = Target(target) if isinstance(target, str) else (target or Target.current())
    if t is not None and t.kind.name != "llvm":
        return None
    attrs = dict(t.attrs) if t is not None else {}
    mattr = {f[1:] for f in attrs.get("mattr") or [] if f.startswith("+")}
    cpu = attrs.get("mcpu")
    if not mattr.intersection({"avx512vnni", "avxvnni"}):
        triple = attrs.get("mtriple") or ""
        if cpu in (None, "native") and (not triple or triple == llvm.get_process_triple()):
            mattr = set(_host_features())
        elif cpu in _AVX512_VNNI_CPUS:
            return "avx512"
        elif cpu in _AVX_VNNI_CPUS:
            return "avx"
    if "avx512vnni" in mattr:
        return "avx512"
    if "avxvnni" in mattr:
        return "avx"
    return None


def vnni_lanes(kind: Optional[str]) -> tuple:
    """The int32 lane counts the VNNI of `kind` computes in one instruction."""
    if kind == "avx512":
        return (16, 8, 4)
    if kind == "avx":
        return (8, 4)
    return ()


def _intrinsic_name(kind: str, lanes: int) -> str:
    bits = lanes * 32
    return f"llvm.x86.avx512.vpdpbusd.{bits}" if kind == "avx512" else \
        f"llvm.x86.avxvnni.vpdpbusd.{bits}"


def register_intrinsics(target=None) -> Optional[str]:
    """`vnni_kind(target)`, the IDs of its vpdpbusd intrinsics (every width) looked up in this
    process, so that kernels using them that forked workers lower compile here (and in the
    workers this process forks later)."""
    kind = vnni_kind(target)
    for lanes in vnni_lanes(kind):
        llvm_lookup_intrinsic_id(_intrinsic_name(kind, lanes))
    return kind


def dot_u8s8(lanes: int, kind: str):
    """The tensor intrinsic out[i] += sum_k int32(data[k]) * int32(kernel[i, k]), i < lanes,
    k < 4 (data uint8, kernel int8 rows of 4 contiguous bytes, out int32), by vpdpbusd."""
    data = te.placeholder((4,), dtype="uint8", name="data")
    kernel = te.placeholder((lanes, 4), dtype="int8", name="kernel")
    k = te.reduce_axis((0, 4), name="k")
    out = te.compute((lanes,), lambda i: te.sum(
        data[k].astype("int32") * kernel[i, k].astype("int32"), axis=k), name="out")
    a_buf = tir.decl_buffer(data.shape, "uint8", name="a", offset_factor=1, strides=[1])
    b_buf = tir.decl_buffer(kernel.shape, "int8", name="b", offset_factor=1,
                            strides=[te.var("ldw"), 1])
    c_buf = tir.decl_buffer(out.shape, "int32", name="c", offset_factor=1, strides=[1])
    vec = f"int32x{lanes}"
    name = _intrinsic_name(kind, lanes)

    def store(buf, value):
        return tir.BufferStore(buf, value, vector_indices(buf, [0], vec, "vstore"))

    def intrin(ins, outs):
        def update(first: bool):
            quad = tir.call_intrin("int32", "tir.reinterpret", ins[0].vload([0], "uint8x4"))
            a = tir.Broadcast(quad, lanes)
            b = tir.call_intrin(vec, "tir.reinterpret", ins[1].vload([0, 0], f"int8x{4 * lanes}"))
            acc = tir.Broadcast(tir.const(0, "int32"), lanes) if first else \
                outs[0].vload([0], vec)
            return store(outs[0], tir.call_llvm_pure_intrin(vec, name, tir.const(0, "uint32"),
                                                            acc, a, b))

        # no reset: the first step of the reduction multiply-adds onto zero
        return update(True), None, update(False)

    return te.decl_tensor_intrin(out.op, intrin, name=f"dot_u8s8_{lanes}",
                                 binds={data: a_buf, kernel: b_buf, out: c_buf})


__all__ = ["dot_u8s8", "register_intrinsics", "vnni_kind", "vnni_lanes"]
