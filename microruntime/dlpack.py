"""DLPack capsules: export an NDArray, import any producer (numpy, torch, ...) zero-copy.

A capsule is named "dltensor" (DLPack < 1.0) or "dltensor_versioned" (>= 1.0); a consumer
renames it "used_dltensor[_versioned]" and owns the managed tensor from then on. Unconsumed
capsules are freed by a destructor written in C (in the extension's preamble).
"""
import ctypes

from ._loader import ffi, lib
from .base import check_call

# Capsule names must outlive the capsules: module-level bytes.
_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_DESTRUCTOR = int(ffi.cast("uintptr_t", lib.mr_py_dlpack_capsule_destructor()))


def to_capsule(nd, versioned):
    """A capsule holding a managed tensor that keeps `nd`'s Tensor object alive."""
    if nd._handle is None:
        raise BufferError("a borrowed tensor view cannot be exported through DLPack")
    if versioned:
        out = ffi.new("DLManagedTensorVersioned**")
        check_call(lib.mr_tensor_to_dlpack_versioned(nd._handle, out))
        name = _NAME_VERSIONED
    else:
        out = ffi.new("DLManagedTensor**")
        check_call(lib.mr_tensor_to_dlpack(nd._handle, out))
        name = _NAME
    managed = out[0]
    try:
        return _api.PyCapsule_New(int(ffi.cast("uintptr_t", managed)), name, _DESTRUCTOR)
    except BaseException:
        managed.deleter(managed)
        raise


def from_capsule(capsule, wrap):
    """Consumes a DLPack capsule into a Tensor object; `wrap(handle)` makes the NDArray."""
    out = ffi.new("TVMFFIObject**")
    if _api.PyCapsule_IsValid(capsule, _NAME_VERSIONED):
        ptr = _api.PyCapsule_GetPointer(capsule, _NAME_VERSIONED)
        managed = ffi.cast("DLManagedTensorVersioned*", ptr)
        check_call(lib.mr_tensor_from_dlpack_versioned(managed, out))
        _api.PyCapsule_SetName(capsule, _USED_VERSIONED)
    elif _api.PyCapsule_IsValid(capsule, _NAME):
        ptr = _api.PyCapsule_GetPointer(capsule, _NAME)
        check_call(lib.mr_tensor_from_dlpack(ffi.cast("DLManagedTensor*", ptr), out))
        _api.PyCapsule_SetName(capsule, _USED)
    else:
        raise ValueError("expected an unconsumed DLPack capsule named 'dltensor' or "
                         "'dltensor_versioned' (was it used already?)")
    return wrap(out[0])


def from_producer(obj, wrap):
    """Imports an object with __dlpack__ (preferring a versioned capsule) or a capsule."""
    if not hasattr(obj, "__dlpack__"):
        if type(obj).__name__ == "PyCapsule":
            return from_capsule(obj, wrap)
        raise TypeError(f"{type(obj).__name__} does not support DLPack (no __dlpack__)")
    try:
        capsule = obj.__dlpack__(max_version=(1, 1))
    except TypeError:  # a producer older than DLPack 1.0
        capsule = obj.__dlpack__()
    return from_capsule(capsule, wrap)
