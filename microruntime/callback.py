"""Python callables as C Functions.

A Python callable becomes a Function object whose safe_call is the cffi trampoline
`_mr_py_safe_call` and whose `self` is an `ffi.new_handle` of the callable; the Function's
deleter drops that handle. A Python exception inside the callable becomes an error recorded
with TVMFFIErrorSetRaisedFromCStr(kind=class name, message) and status -1, never a crash.
"""
import contextlib
import threading

from ._loader import ffi, lib
from .base import check_call, exc_kind_and_message, remember_python_error
from .convert import OBJECT, borrow_any, set_owned_any
from .ndarray import NDArrayView

# address of the handle -> the handle (keeps the callable alive while C holds the Function)
_HANDLES = {}
_HANDLES_LOCK = threading.Lock()


def _clear_result(result, owned):
    """Leaves `result` None, first releasing the object it owns when `owned`."""
    if owned and result.type_index >= OBJECT:
        lib.mr_object_release(result.v_obj)
    words = ffi.cast("int64_t*", result)
    words[0] = words[1] = 0


@ffi.def_extern()
def _mr_py_safe_call(handle, args, num_args, result):
    owned = False  # whether `result` holds a value set_owned_any wrote
    try:
        func = ffi.from_handle(handle)
        py_args = [borrow_any(args + i) for i in range(num_args)]
        try:
            ret = func(*py_args)
            if ret is not None:
                set_owned_any(result, ret)
                owned = True
        finally:
            for arg in py_args:  # DLTensor* arguments are lent for the call only
                if isinstance(arg, NDArrayView):
                    arg.release()
        return 0
    except BaseException as exc:  # every exception must stop here: C is above us
        try:
            _clear_result(result, owned)
            kind, message = exc_kind_and_message(exc)
        except BaseException:
            exc, kind, message = None, b"RuntimeError", b"error in a Python callback"
        lib.TVMFFIErrorSetRaisedFromCStr(kind, message)
        if exc is not None:
            with contextlib.suppress(BaseException):
                remember_python_error(exc)  # tied to the error just recorded
        return -1


@ffi.def_extern()
def _mr_py_func_deleter(self):
    handles = _HANDLES
    if handles is not None:  # None during interpreter shutdown
        with _HANDLES_LOCK:
            handles.pop(int(ffi.cast("uintptr_t", self)), None)


def convert_func(pyfunc):
    """A PackedFunc (a C Function) that calls the Python callable `pyfunc`."""
    from .packed_func import PackedFunc

    if isinstance(pyfunc, PackedFunc):
        return pyfunc
    if not callable(pyfunc):
        raise TypeError(f"expected a callable, got {type(pyfunc).__name__}")
    handle = ffi.new_handle(pyfunc)
    key = int(ffi.cast("uintptr_t", handle))
    with _HANDLES_LOCK:
        _HANDLES[key] = handle
    out = ffi.new("TVMFFIObjectHandle*")
    status = lib.TVMFFIFunctionCreate(handle, lib._mr_py_safe_call, lib._mr_py_func_deleter, out)
    if status != 0:
        with _HANDLES_LOCK:
            _HANDLES.pop(key, None)
        check_call(status)
    return PackedFunc(ffi.cast("TVMFFIObject*", out[0]))
