"""Installs the C fast call path (py_fastcall.c) as PackedFunc.__call__ on CPython.

Without it (another Python implementation, or MR_PY_FASTCALL=0) PackedFunc calls go through
the pure-cffi path, which handles every argument type; with it, that path serves only the
arguments the C path hands back (see py_fastcall.c).
"""
import ctypes
import os
import platform

from ._loader import ffi, lib
from .base import last_error
from .convert import take_any

# Objects whose addresses the C side keeps (borrowed): they must live as long as the module.
_KEEP = []


def _take_result(address):
    return take_any(ffi.cast("TVMFFIAny*", address))


def _raise_error():
    raise last_error(True)


def install(packed_func_cls, ndarray_cls):
    """Makes `packed_func_cls.__call__` the C fast path; returns whether it was installed."""
    if platform.python_implementation() != "CPython" or os.environ.get("MR_PY_FASTCALL") == "0":
        return False
    slow_call = packed_func_cls._call_python
    descrs = (ndarray_cls.__dict__["_addr"], packed_func_cls.__dict__["_faddr"])
    _KEEP.extend([ndarray_cls, descrs, slow_call, _take_result, _raise_error])
    if lib.mr_py_fastcall_init(id(ndarray_cls), id(descrs[0]), id(descrs[1]), id(slow_call),
                               id(_take_result), id(_raise_error)) != 0:
        return False
    new_descr = ctypes.pythonapi.PyDescr_NewMethod
    new_descr.restype = ctypes.py_object
    new_descr.argtypes = [ctypes.py_object, ctypes.c_void_p]
    method_def = int(ffi.cast("uintptr_t", lib.mr_py_fastcall_method_def()))
    packed_func_cls.__call__ = new_descr(packed_func_cls, method_def)
    return True
