"""Loads the cffi extension (the C runtime compiled in) with RTLD_GLOBAL.

Kernel libraries have no DT_NEEDED entries: they import `TVMFFIErrorSetRaisedFromCStrParts`,
`TVMBackendAllocWorkspace`, ... from the global namespace, so the extension that defines them
must be loaded RTLD_GLOBAL before any kernel library is dlopen'ed. `MR_FFI_VARIANT=asan` loads
the ASan/UBSan build (`python microruntime/build_ffi.py --inplace-asan`) instead.
"""
import importlib
import os
import sys

_VARIANTS = {"": "microruntime._ffi", "asan": "microruntime._ffi_asan"}


def _load():
    variant = os.environ.get("MR_FFI_VARIANT", "")
    if variant not in _VARIANTS:
        raise ImportError(
            f"MR_FFI_VARIANT={variant!r} is not one of {sorted(_VARIANTS)!r}")
    name = _VARIANTS[variant]
    old_flags = sys.getdlopenflags()
    sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)
    try:
        module = importlib.import_module(name)
    except ImportError as err:
        how = ("python microruntime/build_ffi.py --inplace-asan" if variant
               else 'pip install -e .  (or: python microruntime/build_ffi.py --inplace)')
        raise ImportError(f"the microruntime extension {name} is not built ({err}); "
                          f"build it with: {how}") from err
    finally:
        sys.setdlopenflags(old_flags)
    return module.ffi, module.lib


ffi, lib = _load()
