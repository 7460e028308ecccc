"""Target triples as LLVM and the GNU tools spell them.

    normalize_triple("thumbv7em-none-eabihf")   # "thumbv7em-unknown-none-eabihf"
    normalize_triple("aarch64-linux-gnu")       # "aarch64-unknown-linux-gnu"
    is_bare_metal("thumbv7em-none-eabihf")      # True: no operating system
    is_hard_float_arm("thumbv7em-none-eabihf")  # True: floats passed in VFP registers

LLVM's target machine takes a triple literally: the three-part `thumbv7em-none-eabihf` reads
"none" as the vendor and loses the `eabihf` environment's hard-float calling convention, so
objects built from it do not link with hard-float code. The normal form has four parts,
arch-vendor-os-environment, with "unknown" for a missing vendor, as `clang -print-target-triple`
and LLVM's Triple::normalize write it.
"""
from __future__ import annotations

# Operating systems (and "none", bare metal) that may follow the arch when the vendor is missing.
_OSES = ("none", "linux", "windows", "darwin", "macos", "ios", "freebsd", "netbsd", "openbsd",
         "android", "cuda", "amdhsa", "wasi", "emscripten", "elf", "unknown")


def _is_os(part: str) -> bool:
    return any(part.startswith(os) for os in _OSES)


def normalize_triple(triple: str) -> str:
    """`triple` with its vendor filled in ("unknown") when it was left out."""
    parts = triple.split("-")
    if len(parts) in (2, 3) and _is_os(parts[1]):
        parts.insert(1, "unknown")
    return "-".join(parts)


def _os(triple: str) -> str:
    parts = normalize_triple(triple).split("-")
    return parts[2] if len(parts) > 2 else ""


def is_bare_metal(triple: str) -> bool:
    """Whether code for `triple` runs without an operating system (OS "none", or an ARM
    "eabi"/"eabihf" triple with no OS named)."""
    parts = normalize_triple(triple).split("-")
    return _os(triple) in ("none", "elf") or (
        len(parts) == 3 and parts[0].startswith(("arm", "thumb")) and parts[2].startswith("eabi"))


def is_hard_float_arm(triple: str) -> bool:
    """Whether `triple` is a 32-bit ARM one whose ABI passes floats in VFP registers."""
    parts = normalize_triple(triple).split("-")
    return parts[0].startswith(("arm", "thumb")) and parts[-1].endswith("hf")
