"""convert / convert_to_object / const: Python values as runtime objects, and Array, the
read-only view of an Array object that `convert_to_object(list)` gives."""
import numpy as np

from ._loader import ffi, lib
from .convert import borrow_any, fill_any
from .dtype import DataType
from .ndarray import array
from .object import Object, ObjectGeneric, ShapeTuple, String
from .packed_func import convert_func


class Array(Object):
    """A read-only view of an Array object (what `convert_to_object(list)` gives)."""

    __slots__ = ()

    def _cell(self):
        return lib.mr_array_view(self._handle)

    def __len__(self):
        return int(self._cell().size)

    def __getitem__(self, index):
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


def convert_to_object(value):
    """`value` as a runtime value: objects stay, lists become Array objects, str a String,
    numpy arrays NDArrays; ints, floats, bools and None stay Python values (held inline)."""
    if isinstance(value, Object):
        return value
    if isinstance(value, ObjectGeneric):
        return value.asobject()
    if value is None or isinstance(value, (bool, int, float, DataType)):
        return value
    if isinstance(value, str):
        return String(value)
    if isinstance(value, ShapeTuple):
        return value
    if isinstance(value, np.ndarray):
        return array(value)
    if isinstance(value, (list, tuple)):
        return _array(value)
    if callable(value):
        return convert_func(value)
    raise TypeError(f"cannot convert a value of type {type(value).__name__} to an object")


def convert(value):
    """Converts a Python value (or callable) to a runtime object or function."""
    return convert_to_object(value)


def _array(items):
    temps = []
    slot = ffi.new("TVMFFIAny*")
    fill_any(slot, list(items), temps)
    lib.mr_object_retain(slot.v_obj)
    return Array(slot.v_obj)


def const(value, dtype=None):
    """A 0-d NDArray holding `value`; dtype defaults like TVM's (bool, int32/int64, float32)."""
    if dtype is None:
        if isinstance(value, (bool, np.bool_)):
            dtype = "bool"
        elif isinstance(value, (int, np.integer)):
            dtype = "int32" if -(2**31) <= int(value) < 2**31 else "int64"
        elif isinstance(value, (float, np.floating)):
            dtype = "float32"
        else:
            raise TypeError(f"cannot make a constant of type {type(value).__name__}")
    return array(np.asarray(value, dtype=DataType(dtype).numpy_dtype()))
