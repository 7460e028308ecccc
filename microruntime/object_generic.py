"""convert / convert_to_object / const: Python values as runtime objects, and Array and Map,
the read-only views of the containers that `convert_to_object(list | dict)` gives."""
import json

import numpy as np

from ._loader import ffi, lib
from .abi import TypeIndex
from .convert import borrow_any, fill_any
from .device import Device
from .dtype import DataType
from .ndarray import array
from .object import WRAPPERS, Object, ObjectGeneric, OpaqueValue, ShapeTuple, String
from .packed_func import convert_func, get_global_func

# The global function that makes an IR constant of a Python number, (value, dtype or None) ->
# constant; a compiler registers it (as TVM's libtvm does). Without it numbers stay numbers.
CONST_MAKER = "node._const"


class Array(Object):
    """A read-only view of an Array object (what `convert_to_object(list)` gives)."""

    __slots__ = ()
    type_key = "Array"

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

    def __str__(self):
        return _text(self)

    def __reduce__(self):
        return make_array, (list(self),)


class Map(Object):
    """A read-only view of a Map object (what `convert_to_object(dict)` gives): a mapping whose
    keys are found as the runtime finds them (strings by contents, objects by identity)."""

    __slots__ = ()
    type_key = "Map"

    def _pairs(self):
        size = ffi.new("int64_t*")
        items = lib.mr_map_items(self._handle, size)
        return items, size[0]

    def _find(self, key):
        temps = []
        slot = ffi.new("TVMFFIAny*")
        try:
            fill_any(slot, key, temps)
        except TypeError:
            return -1
        return lib.mr_map_find(self._handle, slot)

    def __len__(self):
        return int(self._pairs()[1])

    def __getitem__(self, key):
        index = self._find(key)
        if index < 0:
            raise KeyError(key)
        return borrow_any(self._pairs()[0] + 2 * index + 1)

    def get(self, key, default=None):
        index = self._find(key)
        return default if index < 0 else borrow_any(self._pairs()[0] + 2 * index + 1)

    def __contains__(self, key):
        return self._find(key) >= 0

    def keys(self):
        items, size = self._pairs()
        return [borrow_any(items + 2 * i) for i in range(size)]

    def values(self):
        items, size = self._pairs()
        return [borrow_any(items + 2 * i + 1) for i in range(size)]

    def items(self):
        items, size = self._pairs()
        return [(borrow_any(items + 2 * i), borrow_any(items + 2 * i + 1)) for i in range(size)]

    def __iter__(self):
        return iter(self.keys())

    def __eq__(self, other):
        if not isinstance(other, (dict, Map)):
            return NotImplemented
        return len(other) == len(self) and all(k in self and _same(self[k], v)
                                               for k, v in other.items())

    __hash__ = Object.__hash__

    def __repr__(self):
        return "Map({" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "})"

    def __str__(self):
        return _text(self)

    def __reduce__(self):
        return make_map, (dict(self.items()),)


def _text(value):
    """`value` printed as TVM prints containers: strings in double quotes, arrays as
    `[a, b]`, maps as `{"key": value}`, other values by their str (so a map of strings,
    numbers and arrays of them reads as JSON)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (Array, list, tuple)) and not isinstance(value, ShapeTuple):
        return "[" + ", ".join(_text(x) for x in value) + "]"
    if isinstance(value, (Map, dict)):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _same(a, b):
    if isinstance(a, OpaqueValue) or isinstance(b, OpaqueValue):
        return a is b
    return a == b


WRAPPERS[TypeIndex.MAP] = Map


def _number(value):
    maker = get_global_func(CONST_MAKER, allow_missing=True)
    return value if maker is None else maker(value, None)


def convert_to_object(value):
    """`value` as a runtime value, as TVM's: objects stay; lists become Array objects and dicts
    Map objects, their items converted too; str a String, numpy arrays NDArrays; numbers
    become IR constants (`node._const`) where a compiler registered that, and stay Python
    numbers otherwise; None, DataType and Device values stay."""
    if isinstance(value, (Object, OpaqueValue)):
        return value
    if isinstance(value, ObjectGeneric):
        return value.asobject()
    if value is None or isinstance(value, (DataType, Device)):
        return value
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return _number(value)
    if isinstance(value, str):
        return String(value)
    if isinstance(value, ShapeTuple):
        return value
    if isinstance(value, np.ndarray):
        return array(value)
    if isinstance(value, (list, tuple)):
        return _container([convert(x) for x in value], Array)
    if isinstance(value, dict):
        return _container({convert_to_object(k): convert(v) for k, v in value.items()}, Map)
    if callable(value):
        return convert_func(value)
    raise TypeError(f"cannot convert a value of type {type(value).__name__} to an object")


def convert(value):
    """Converts a Python value (or callable: a PackedFunc) to a runtime object or function."""
    if callable(value) and not isinstance(value, (Object, OpaqueValue, ObjectGeneric)):
        return convert_func(value)
    return convert_to_object(value)


def _container(value, cls):
    temps = []
    slot = ffi.new("TVMFFIAny*")
    fill_any(slot, value, temps)
    lib.mr_object_retain(slot.v_obj)
    return cls(slot.v_obj)


def make_array(items):
    """An Array of `items` as they are (no conversion of numbers)."""
    return _container(list(items), Array)


def make_map(mapping):
    """A Map of `mapping`'s pairs as they are (no conversion of numbers)."""
    return _container(dict(mapping), Map)


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
