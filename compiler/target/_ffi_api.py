"""`tvm.target._ffi_api`: the global functions named `target.<name>`, as attributes."""
from microruntime.packed_func import get_global_func

PREFIX = "target."


def __getattr__(name):
    func = get_global_func(PREFIX + name, allow_missing=True)
    if func is None:
        raise AttributeError(f"no global function {PREFIX + name!r} (tvm.target._ffi_api."
                             f"{name})")
    return func
