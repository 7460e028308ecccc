"""What a CPU target's vector unit offers, for the operator templates that size register tiles.

    isa = vector_isa(Target("llvm -mcpu=skylake-avx512"))
    isa.name, isa.vector_bits, isa.registers, isa.fma   # "avx512", 512, 32, True
    isa.lanes("float32")                                # 16

The ISA comes from, in order: `-mattr` features (+avx512f, +avx2, +fma, +neon), `-mcpu` (a
table of CPU names; "native" or none without a foreign `-mtriple` means this host, read from
LLVM), then the `-mtriple` architecture. Unknown x86 CPUs get SSE2, the x86-64 baseline.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import FrozenSet, Optional

import llvmlite.binding as llvm

from .target import Target, as_target


@dataclass(frozen=True)
class VectorISA:
    """name: "avx512", "avx2", "sse", "neon" or "scalar"; vector_bits: width of one vector
    register; registers: how many there are (architectural); fma: fused multiply-add."""
    name: str
    vector_bits: int
    registers: int
    fma: bool

    def lanes(self, dtype: str = "float32") -> int:
        """Elements of `dtype` in one vector register (at least 1)."""
        bits = int("".join(c for c in dtype if c.isdigit()) or 32)
        return max(1, self.vector_bits // bits)


AVX512 = VectorISA("avx512", 512, 32, True)
AVX2 = VectorISA("avx2", 256, 16, True)
SSE = VectorISA("sse", 128, 16, False)
NEON = VectorISA("neon", 128, 32, True)
SCALAR = VectorISA("scalar", 32, 16, True)

_AVX512_CPUS = frozenset({
    "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
    "icelake-server", "tigerlake", "sapphirerapids", "emeraldrapids", "graniterapids",
    "rocketlake", "knl", "knm", "znver4", "znver5", "x86-64-v4"})
_AVX2_CPUS = frozenset({
    "haswell", "broadwell", "skylake", "kabylake", "coffeelake", "cometlake", "alderlake",
    "raptorlake", "meteorlake", "arrowlake", "lunarlake", "gracemont", "znver1", "znver2",
    "znver3", "bdver4", "x86-64-v3", "core-avx2"})


@lru_cache(maxsize=1)
def _host_features() -> FrozenSet[str]:
    return frozenset(k for k, on in llvm.get_host_cpu_features().items() if on)


def _from_features(features: FrozenSet[str], x86: bool) -> Optional[VectorISA]:
    if "avx512f" in features:
        return AVX512
    if "avx2" in features:
        return AVX2 if "fma" in features else VectorISA("avx2", 256, 16, False)
    if "neon" in features:
        return NEON
    if x86 and "avx" in features:
        return VectorISA("avx", 256, 16, "fma" in features)
    return None


def vector_isa(target=None) -> VectorISA:
    """The vector ISA `target` (a Target, a string, or None for the current target, else the
    host) compiles for."""
    t: Optional[Target] = as_target(target) if target is not None else Target.current()
    attrs = dict(t.attrs) if t is not None else {}
    host_arch = llvm.get_process_triple().split("-")[0]
    triple = attrs.get("mtriple") or ""
    arch = triple.split("-")[0] if triple else host_arch
    x86 = arch in ("x86_64", "i686", "i386", "amd64")
    mattr = frozenset(f[1:] for f in attrs.get("mattr") or [] if f.startswith("+"))
    isa = _from_features(mattr, x86)
    if isa is not None:
        return isa
    cpu = attrs.get("mcpu") or attrs.get("march")
    if (cpu in (None, "native")) and arch == host_arch:
        return _from_features(_host_features(), x86) or (SSE if x86 else SCALAR)
    if cpu in _AVX512_CPUS:
        return AVX512
    if cpu in _AVX2_CPUS:
        return AVX2
    if arch.startswith("aarch64") or arch.startswith("arm64"):
        return NEON
    return SSE if x86 else SCALAR
