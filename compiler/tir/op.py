"""Loop-IR expressions a user writes by hand (as `tvm.tir.call_packed`)."""
from __future__ import annotations

from ..ir.dtype import int32
from ..ir.errors import IRError
from . import expr as E
from .buffer import Buffer


def call_packed(name: str, *args) -> E.Call:
    """`tir.call_packed(name, args...)`: at run time, calls the function `name` found through
    the library context (the module's imports, then the global registry), e.g. one registered
    with `microruntime.register_func`. The value is the int32 status (a failure returns its
    status from the calling kernel at once). A Buffer argument passes a DLTensor* describing it
    (on the function's device, compact, byte_offset 0); ints go as Int, floats as Float, str as
    a C string, handles as DLTensor*."""
    if not isinstance(name, str) or not name:
        raise IRError(f"call_packed needs the function name as a non-empty str, got {name!r}")
    converted = tuple(a if isinstance(a, Buffer) else E.convert(a) for a in args)
    return E.Call(int32, "tir.call_packed", (E.StringImm(name),) + converted)
