"""Object: a Python owner of one strong reference to a C object (TVMFFIObject*).

Also the value classes that mirror TVM's containers: String (a str), ShapeTuple (a tuple of
ints), ObjectGeneric and OpaqueValue; Array and Map, views of C containers, are in
object_generic.py.
"""
import sys

from ._loader import ffi, lib
from .base import check_call

# type_index -> callable(owned handle) -> Python value; filled by the modules defining wrappers.
WRAPPERS = {}


class Object:
    """Base class of every Python object that owns a C object."""

    __slots__ = ("_handle", "__weakref__")

    def __init__(self, handle):
        # `handle` is an owned reference (TVMFFIObject*); it is released with the Python object.
        self._handle = handle

    def __del__(self, _finalizing=sys.is_finalizing):
        handle = self._handle
        if handle is not None:
            self._handle = None
            if _finalizing():  # interpreter shutdown: callbacks into Python no longer work
                return
            try:
                lib.mr_object_release(handle)
            except (AttributeError, TypeError):  # interpreter shutdown
                pass

    @property
    def handle(self):
        """The TVMFFIObject* (a cffi pointer), borrowed from this object."""
        return self._handle

    @property
    def type_index(self):
        return lib.mr_object_type_index(self._handle)

    def same_as(self, other):
        """Whether both refer to the same C object."""
        return isinstance(other, Object) and self._handle == other._handle

    def __repr__(self):
        return f"<{type(self).__name__} type_index={self.type_index} at {self._handle}>"


class OpaqueValue:
    """Base of Python classes (the compiler's IR nodes) whose instances cross runtime functions
    as themselves: each travels as an OpaquePyObject (type index 74) holding a reference to it,
    and a Python callee or caller receives the very same object."""

    __slots__ = ()


class ObjectGeneric:
    """Base class for Python values that convert themselves to an object with `asobject()`."""

    def asobject(self):
        raise NotImplementedError()


class String(str):
    """A runtime String: a Python str (passed to C as a Str object).

    `__tvm_object__` is the Str object behind it: the one it came from when a function returned
    it, else one made on first use; passing the String passes that very object, so a String
    that goes through a function and back is the same object (`same_as`)."""

    def __new__(cls, value="", _object=None):
        self = str.__new__(cls, value)
        self._object = _object
        return self

    @property
    def __tvm_object__(self):
        if self._object is None:
            out = ffi.new("TVMFFIObject**")
            data = self.encode("utf-8")
            check_call(lib.mr_str_create(data, len(data), out))
            self._object = Object(out[0])
        return self._object

    def __reduce__(self):
        return (String, (str(self),))


class ShapeTuple(tuple):
    """A runtime Shape: a tuple of ints (passed to C as a Shape object); equal to a list or a
    tuple of the same ints."""

    __slots__ = ()

    def __new__(cls, shape=()):
        return tuple.__new__(cls, (int(x) for x in shape))

    def __eq__(self, other):  # equal to any list or tuple of the same ints, as TVM's
        if isinstance(other, (list, tuple)):
            return tuple.__eq__(self, tuple(other))
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self):
        return f"ShapeTuple({list(self)})"


def bytes_of(handle):
    """The bytes a Str or Bytes object holds (a copy; `handle` is borrowed)."""
    view = lib.mr_bytes_view(handle)
    return ffi.unpack(view.data, view.size)
