"""Which targets are Arm Cortex-M CPUs with the DSP extension, and its dual 16-bit
multiply-add SMLAD as an expression.

SMLAD(a, b, acc) = acc + lo(a) * lo(b) + hi(a) * hi(b), the halves of the 32-bit words a and b
read as signed 16-bit values (`dot2` is the same sum in plain arithmetic). The DSP extension is
part of every Cortex-M4 and M7 (thumbv7em), of the M55 and M85 (Armv8.1-M: MVE requires it), and
an option of the M33 and M35P (`-mattr=+dsp`).

The llvm target calls LLVM's `llvm.arm.smlad`; the c target calls GCC's and Clang's
`__builtin_arm_smlad` (what ACLE's `__smlad` is made of), which the C compiler of an Arm
target knows without a header.
"""
from __future__ import annotations

from typing import Optional

from ... import tir
from ...target import Target
from ...target.codegen import llvm_lookup_intrinsic_id

SMLAD = "llvm.arm.smlad"
SMLAD_BUILTIN = "__builtin_arm_smlad"
# -mcpu names of Cortex-M cores with the DSP extension always present.
_DSP_CPUS = frozenset({"cortex-m4", "cortex-m7", "cortex-m55", "cortex-m85"})


def _target(target) -> Optional[Target]:
    if isinstance(target, str):
        return Target(target)
    return target if target is not None else Target.current()


def is_cortex_m(target) -> bool:
    """Whether `target` (a Target, its string, or None: the current one) generates code for an
    M-profile Arm CPU (a thumbv6m/v7m/v7em/v8m triple, or -mcpu=cortex-m*)."""
    t = _target(target)
    if t is None or t.kind.name not in ("llvm", "c"):
        return False
    attrs = dict(t.attrs)
    triple = attrs.get("mtriple") or ""
    cpu = attrs.get("mcpu") or ""
    return cpu.startswith("cortex-m") or (triple.startswith("thumbv") and "m" in
                                          triple.split("-")[0][len("thumbv"):])


def has_dsp(target) -> bool:
    """Whether `target` is a Cortex-M CPU with the DSP extension (SMLAD): a thumbv7em or
    thumbv8.1m triple, one of the cores that always have it, or -mattr=+dsp / +mve / +mve.fp;
    -mattr=-dsp turns it off."""
    if not is_cortex_m(target):
        return False
    attrs = dict(_target(target).attrs)
    mattr = set(attrs.get("mattr") or [])
    if "-dsp" in mattr:
        return False
    arch = (attrs.get("mtriple") or "").split("-")[0]
    return (arch.startswith(("thumbv7em", "thumbv8.1m")) or attrs.get("mcpu") in _DSP_CPUS
            or bool(mattr & {"+dsp", "+mve", "+mve.fp"}))


def register_intrinsics() -> None:
    """Looks up SMLAD's LLVM intrinsic ID in this process, so that kernels using it that forked
    workers lower compile here (and in the workers this process forks later)."""
    llvm_lookup_intrinsic_id(SMLAD)


def smlad(a, b, acc, target):
    """SMLAD(a, b, acc) (int32 words) for `target` (kind llvm or c)."""
    if _target(target).kind.name == "llvm":
        return tir.call_llvm_pure_intrin("int32", SMLAD, tir.const(0, "uint32"), a, b, acc)
    return tir.call_pure_extern("int32", SMLAD_BUILTIN, a, b, acc)


def lo16(w):
    """The low half of int32 word `w` as a signed 16-bit value (in int32)."""
    return w.astype("int16").astype("int32")


def hi16(w):
    """The high half of int32 word `w` as a signed 16-bit value (in int32)."""
    return w >> 16


def dot2(a, b):
    """lo(a) * lo(b) + hi(a) * hi(b): what SMLAD adds to its accumulator."""
    return lo16(a) * lo16(b) + hi16(a) * hi16(b)


def pack16(lo, hi):
    """The int32 word with int32 `lo` (in int16's range) in its low half and `hi` in its high
    half (made in uint32: no shift of a negative value)."""
    low = lo.astype("uint16").astype("uint32")
    high = hi.astype("uint32") << tir.const(16, "uint32")
    return tir.call_intrin("uint32", "tir.bitwise_or", low, high).astype("int32")


__all__ = ["dot2", "has_dsp", "hi16", "is_cortex_m", "lo16", "pack16", "register_intrinsics",
           "smlad"]
