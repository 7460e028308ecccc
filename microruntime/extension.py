"""register_extension: Python classes whose instances pass to functions as what their
`_tvm_handle` is (classic TVM's extension types).

A registered class has a class attribute `_tvm_tcode` (an ArgTypeCode) and a property
`_tvm_handle` (an int address). Code DLTENSOR_HANDLE passes the address as a DLTensor* (the
callee reads and writes that tensor), code HANDLE as an opaque pointer. Other codes have no
meaning for a TVM-FFI callee and are refused when the class is registered.
"""
from .runtime_ctypes import ArgTypeCode

# class -> the ArgTypeCode its instances pass as; read by convert.fill_any
EXTENSIONS = {}
_PASSABLE = (ArgTypeCode.DLTENSOR_HANDLE, ArgTypeCode.HANDLE)


def register_extension(cls, fcreate=None):
    """Registers `cls` as an extension type; usable as a class decorator. `fcreate` (making an
    instance from a handle a function returns) is not supported: results never come back as
    extension instances."""
    if fcreate is not None:
        raise ValueError("register_extension: fcreate is not supported (results of functions "
                         "are never converted back to extension instances)")
    code = getattr(cls, "_tvm_tcode", None)
    if code not in _PASSABLE:
        raise ValueError(f"register_extension: {cls.__name__}._tvm_tcode is {code!r}; "
                         "supported: ArgTypeCode.DLTENSOR_HANDLE, ArgTypeCode.HANDLE")
    if not hasattr(cls, "_tvm_handle"):
        raise ValueError(f"register_extension: {cls.__name__} has no _tvm_handle")
    EXTENSIONS[cls] = ArgTypeCode(code)
    return cls


def extension_code(value):
    """The ArgTypeCode `value` passes as when its class (or a base) is registered, else None."""
    for klass in type(value).__mro__:
        code = EXTENSIONS.get(klass)
        if code is not None:
            return code
    return None
