"""Targets: what the compiler generates code for (`Target("llvm -mcpu=znver4")`, "c", "cuda",
"opencl", "metal", "vulkan", "nvptx"), with `with Target(...)` contexts as in tvm.target."""
from . import codegen
from .kinds import KINDS, TargetKind
from .split import split_targets
from .target import Target, TargetLike, as_target, check_system_lib_prefix

__all__ = ["Target", "TargetKind", "TargetLike", "KINDS", "as_target", "check_system_lib_prefix",
           "split_targets", "codegen", "cuda", "llvm", "c"]


def c(options: str = "") -> Target:
    return Target(f"c {options}".strip())


def llvm(options: str = "") -> Target:
    return Target(f"llvm {options}".strip())


def cuda(options: str = "") -> Target:
    return Target(f"cuda {options}".strip())
