"""PackedFunc: a callable runtime Function object (also one made of a Python callable:
`convert_func`), and the global function registry.

Calls go through the C fast path (py_fastcall.c, installed by fastcall.py on CPython) for
NDArray/int/float/None arguments: arguments are written into a TVMFFIAny array on the C stack
and None/int/float/bool results come back without Python-level conversion. Every other call
takes `_call_python`: argument slots filled by `fill_any` (objects it creates are kept alive
in `temps` until the call returned; numpy copies are written back), results by `take_any`.
"""
from . import fastcall
from ._loader import ffi, lib
from .abi import TypeIndex
from .base import c_str, check_call, last_error
from .convert import fill_any, function_from_callable, take_any, wrap_object
from .ndarray import NDArray, _WriteBack
from .object import WRAPPERS, Object

_call = lib.TVMFFIFunctionCall


def _finish(temps):
    for t in temps:
        if type(t) is _WriteBack:
            t.run()


class PackedFunc(Object):
    """A runtime Function; call it like a Python function."""

    __slots__ = ("_faddr",)

    def __init__(self, handle):
        Object.__init__(self, handle)
        self._faddr = int(ffi.cast("uintptr_t", handle))

    def __del__(self):
        self._faddr = 0
        super().__del__()  # no module globals: they may be gone at interpreter shutdown

    def _call_python(self, *args):
        n = len(args)
        buf = ffi.new("TVMFFIAny[]", n or 1)
        result = ffi.new("TVMFFIAny*")
        temps = []
        for i, a in enumerate(args):
            fill_any(buf + i, a, temps)
        if _call(self._handle, buf, n, result) != 0:
            raise last_error(True)
        _finish(temps)
        return None if result.type_index == TypeIndex.NONE else take_any(result)

    __call__ = _call_python

    def __repr__(self):
        return f"<microruntime.PackedFunc at {self._handle}>"


WRAPPERS[TypeIndex.FUNCTION] = PackedFunc
fastcall.install(PackedFunc, NDArray)


def convert_func(pyfunc):
    """A PackedFunc for a PackedFunc (itself) or a Python callable (a C Function calling it)."""
    if isinstance(pyfunc, PackedFunc):
        return pyfunc
    return PackedFunc(function_from_callable(pyfunc))



def register_func(func_name, f=None, override=False):
    """Registers a Python callable (or PackedFunc) as global function `func_name`.

    Usable as `register_func("name", f)`, `@register_func("name")` or `@register_func`
    (then the function's own name is used). Returns the registered callable.
    """
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str):
        raise TypeError(f"function name must be a str, not {type(func_name).__name__}")

    def register(myf):
        func = convert_func(myf)
        check_call(lib.mr_registry_set(c_str(func_name), func._handle, 1 if override else 0))
        return myf

    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    """The global function `name`; None when it is missing and `allow_missing`."""
    out = ffi.new("TVMFFIObject**")
    if lib.mr_registry_get(c_str(name), out) != 0:
        err = last_error()
        if allow_missing:
            return None
        raise ValueError(f"cannot find global function {name!r}: {err}") from None
    if out[0] == ffi.NULL:
        if allow_missing:
            return None
        raise ValueError(f"global function {name!r} is not registered")
    return PackedFunc(out[0])


def list_global_func_names():
    """The names of every registered global function."""
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_registry_list(out))
    return wrap_object(TypeIndex.ARRAY, out[0])


def remove_global_func(name):
    check_call(lib.mr_registry_remove(c_str(name)))
