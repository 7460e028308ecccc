"""Object: a Python owner of one strong reference to a C object (TVMFFIObject*).

Also the value classes that mirror TVM's containers: String (a str), ShapeTuple (a tuple of
ints), Array (a read-only sequence view of an Array object) and ObjectGeneric.
"""
import sys

from ._loader import ffi, lib

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


class ObjectGeneric:
    """Base class for Python values that convert themselves to an object with `asobject()`."""

    def asobject(self):
        raise NotImplementedError()


class String(str):
    """A runtime String: a Python str (passed to C as a Str object)."""

    __slots__ = ()


class ShapeTuple(tuple):
    """A runtime Shape: a tuple of ints (passed to C as a Shape object)."""

    __slots__ = ()

    def __new__(cls, shape=()):
        return tuple.__new__(cls, (int(x) for x in shape))

    def __repr__(self):
        return f"ShapeTuple({list(self)})"


class Array(Object):
    """A read-only view of an Array object (what `convert_to_object(list)` gives)."""

    __slots__ = ()

    def _cell(self):
        return lib.mr_array_view(self._handle)

    def __len__(self):
        return int(self._cell().size)

    def __getitem__(self, index):
        from .convert import borrow_any

        size = len(self)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(size))]
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"Array index {index} out of range for size {size}")
        items = ffi.cast("TVMFFIAny*", self._cell().data)
        return borrow_any(items + index)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other):
        if isinstance(other, (list, tuple, Array)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = Object.__hash__

    def __repr__(self):
        return f"Array({list(self)!r})"


WRAPPERS[71] = Array
