"""Names the microruntime accepts, for kernels and graph inputs.

The runtime reads every name of a graph JSON, a params file or a library into buffers of
`MR_MAX_NAME` bytes (microruntime/src/config.h: 512 by default, 128 in the `MR_CONFIG_SMALL`
build for microcontrollers), the terminating NUL included, and refuses a name that holds a NUL.

- Kernel names are the compiler's own: `fused_<op>_<op>_...` grows with the operators of a
  group, so a long one is shortened as TVM does: a readable prefix, `_` and a short hash of
  the whole name (distinct names stay distinct), short enough for both builds once the
  `__tvm_ffi_` prefix of its symbol is added.
- Input names are the user's: the runtime's callers feed inputs by them, so one the runtime
  cannot read is a compile-time error that names it.
"""
from __future__ import annotations

import hashlib

from ...ir.errors import IRError

RUNTIME_MAX_NAME = 512          # MR_MAX_NAME of the default build, NUL included
KERNEL_NAME_PREFIX = 80         # characters kept of a long kernel name (TVM keeps 80)
KERNEL_NAME_LIMIT = 100         # longer kernel names are shortened (fits MR_CONFIG_SMALL too)
_HASH_DIGITS = 16


def short_kernel_name(name: str) -> str:
    """`name` itself when short, else its first KERNEL_NAME_PREFIX characters, `_` and 16 hex
    digits of the SHA-1 of the whole name."""
    if len(name) <= KERNEL_NAME_LIMIT:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
    return f"{name[:KERNEL_NAME_PREFIX].rstrip('_')}_{digest}"


def check_input_name(name: str, what: str = "input") -> None:
    """Raises IRError when the runtime could not read `name` (too long, or holding a NUL)."""
    size = len(name.encode("utf-8"))
    shown = name if len(name) <= 60 else name[:60] + "..."
    if "\0" in name:
        raise IRError(f"{what} name {shown!r} contains a NUL character, which the runtime "
                      "cannot read; rename the " + what)
    if size >= RUNTIME_MAX_NAME:
        raise IRError(f"{what} name {shown!r} is {size} bytes long; the runtime reads names of "
                      f"at most {RUNTIME_MAX_NAME - 1} bytes; rename the {what}")
