"""`tvm.runtime._ffi_api`: the global functions named `runtime.<name>`, as attributes
(`_ffi_api.ModuleGetPropertyMask(mod)` calls the global function
"runtime.ModuleGetPropertyMask"). Whoever registers a `runtime.*` function (the runtime itself,
or a compiler) adds to it."""
from .module import Module, property_mask
from .packed_func import get_global_func, register_func

PREFIX = "runtime."


def _module_property_mask(module):
    if not isinstance(module, Module):
        raise TypeError(f"ModuleGetPropertyMask expects a Module, not {type(module).__name__}")
    return property_mask(module)


register_func(PREFIX + "ModuleGetPropertyMask", _module_property_mask, override=True)


def __getattr__(name):
    func = get_global_func(PREFIX + name, allow_missing=True)
    if func is None:
        raise AttributeError(f"no global function {PREFIX + name!r} (tvm.runtime._ffi_api."
                             f"{name})")
    return func
