"""Which targets are Arm Cortex-M CPUs with the M-profile Vector Extension (MVE, Helium), and
its dot product of eight 16-bit lanes as an expression.

VMLADAVA.S16 Rda, Qn, Qm adds to the 32-bit accumulator Rda the eight products of the signed
16-bit lanes of Qn and Qm: four SMLADs' worth of work in one instruction. MVE is part of
Armv8.1-M; the Cortex-M55 and M85 have it (integer and floating point), other Armv8.1-M cores
may leave it out, hence `-mattr=+mve` / `+mve.fp` on a bare thumbv8.1m triple.

On the c target the kernels call `kiln_mve_dot16(acc, a, b)`, defined in the generated file's
prelude (codegen_templates/c/prelude.h.j2): ACLE's `vmladavaq_s16` of two `vldrhq_s16` loads
(arm_mve.h) where the C compiler targets a CPU with MVE (`__ARM_FEATURE_MVE`, e.g. GCC with
-mcpu=cortex-m55), the same sum in plain C elsewhere (which also lets the kernel run on this
machine). The llvm target has no such path yet: it keeps SMLAD (dsp.py).
"""
from __future__ import annotations

from ... import tir
from .dsp import _target, is_cortex_m

MVE_DOT16 = "kiln_mve_dot16"
# 16-bit lanes of one MVE vector: int32 words (16-bit pairs) per VMLADAVA.
LANES16 = 8
WORDS = LANES16 // 2
# -mcpu names of Cortex-M cores that have MVE.
_MVE_CPUS = frozenset({"cortex-m55", "cortex-m85"})


def has_mve(target) -> bool:
    """Whether `target` is a Cortex-M CPU with MVE whose kernels can use it: a c target for
    -mcpu=cortex-m55 / cortex-m85, or a thumbv8.1m triple with -mattr=+mve / +mve.fp;
    -mattr=-mve turns it off (so do -mattr=-dsp, as MVE requires the DSP extension, and an
    llvm target, which has no MVE kernels)."""
    if not is_cortex_m(target):
        return False
    t = _target(target)
    if t.kind.name != "c":
        return False
    attrs = dict(t.attrs)
    mattr = set(attrs.get("mattr") or [])
    if mattr & {"-mve", "-mve.fp", "-dsp"}:
        return False
    arch = (attrs.get("mtriple") or "").split("-")[0]
    return attrs.get("mcpu") in _MVE_CPUS or (arch.startswith("thumbv8.1m")
                                                and bool(mattr & {"+mve", "+mve.fp"}))


def dot16(acc, a, b):
    """acc + the sum of the products of the eight int16 values at pointers `a` and `b`
    (int32)."""
    return tir.call_pure_extern("int32", MVE_DOT16, acc, a, b)


__all__ = ["LANES16", "MVE_DOT16", "WORDS", "dot16", "has_mve"]
