"""Facts of the LLVM the compiler generates code with, under the names of `tvm.target.codegen`:
intrinsic IDs for `tir.call_llvm_intrin` and the LLVM version."""
from __future__ import annotations

from ..ir.errors import TargetError


def llvm_lookup_intrinsic_id(name: str) -> int:
    """LLVM's ID of the intrinsic `name` ("llvm.fma", "llvm.ctpop.v8i8": a type suffix names
    the base intrinsic), 0 when LLVM has no such intrinsic."""
    from . import llvm_intrinsics

    return llvm_intrinsics.lookup_id(name)


def llvm_get_intrinsic_name(intrin_id) -> str:
    """The name, without type suffix, of an intrinsic ID given by `llvm_lookup_intrinsic_id`."""
    from . import llvm_intrinsics

    name = llvm_intrinsics.base_name(int(getattr(intrin_id, "value", intrin_id)))
    if name is None:
        raise TargetError(f"{intrin_id} is not an LLVM intrinsic ID looked up in this process; "
                          "get one from llvm_lookup_intrinsic_id(name)")
    return name


def llvm_version_major(allow_none: bool = False) -> int:
    """The major version of the LLVM that builds "llvm" targets (llvmlite's)."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        if allow_none:
            return None
        raise TargetError("no LLVM: the llvm target needs llvmlite (pip install llvmlite)") \
            from None
    return int(llvm.llvm_version_info[0])
