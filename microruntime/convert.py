"""Python values <-> TVMFFIAny (the 16-byte value of the TVM-FFI ABI), and Python callables as
C Functions.

`fill_any` writes a Python value into an argument slot as a borrowed view (objects it had to
create are appended to `temps`, which the caller keeps alive until the call returned);
`take_any` converts an owned result and leaves the slot None; `borrow_any` converts a borrowed
argument (a Python callback's), taking its own reference to objects.

A Python callable becomes a Function object whose safe_call is the cffi trampoline
`_mr_py_safe_call` and whose `self` is an `ffi.new_handle` of the callable; the Function's
deleter drops that handle. A Python exception inside the callable becomes an error recorded
with TVMFFIErrorSetRaisedFromCStr(kind=class name, message) and status -1, never a crash.

An OpaqueValue (an IR node) becomes an OpaquePyObject holding a handle of it: one handle per
Python object while any of its boxes lives, so that two boxes of one object are the same key
of a Map; a box coming back to Python gives the object itself. A dict becomes a Map.
"""
import contextlib
import threading

import numpy as np

from ._loader import ffi, lib
from .abi import TYPE_NAMES, TypeIndex
from .base import (
    check_call,
    error_object_parts,
    exc_kind_and_message,
    make_error,
    remember_python_error,
)
from .device import Device
from .dtype import DataType
from .extension import EXTENSIONS, extension_code
from .ndarray import NDArray, NDArrayView, numpy_argument
from .object import (
    WRAPPERS,
    Object,
    ObjectGeneric,
    OpaqueValue,
    ShapeTuple,
    String,
    bytes_of,
)
from .runtime_ctypes import ArgTypeCode

T = TypeIndex
NONE, INT, BOOL, FLOAT, OPAQUE_PTR = T.NONE, T.INT, T.BOOL, T.FLOAT, T.OPAQUE_PTR
DATA_TYPE, DEVICE, DLTENSOR_PTR, RAW_STR = T.DATA_TYPE, T.DEVICE, T.DLTENSOR_PTR, T.RAW_STR
BYTE_ARRAY_PTR, SMALL_STR, SMALL_BYTES = T.BYTE_ARRAY_PTR, T.SMALL_STR, T.SMALL_BYTES
OBJECT, STR, BYTES, ERROR, FUNCTION = T.OBJECT, T.STR, T.BYTES, T.ERROR, T.FUNCTION
SHAPE, TENSOR, ARRAY, MAP, MODULE = T.SHAPE, T.TENSOR, T.ARRAY, T.MAP, T.MODULE
OPAQUE_PY_OBJECT = T.OPAQUE_PY_OBJECT

_new_obj_out = ffi.new


def type_index_name(type_index):
    """What a type index stands for, for messages (as the C runtime names it)."""
    if type_index in TYPE_NAMES:
        return TYPE_NAMES[type_index]
    return "object" if type_index >= T.DYN_OBJECT_BEGIN else "unknown type"


def _created(status, out, temps):
    check_call(status)
    handle = out[0]
    temps.append(Object(handle))
    return handle


def _str_object(data, temps, maker):
    out = _new_obj_out("TVMFFIObject**")
    return _created(maker(data, len(data), out), out, temps)


def _shape_object(shape, temps):
    dims = ffi.new("int64_t[]", list(shape))
    out = _new_obj_out("TVMFFIObject**")
    return _created(lib.mr_shape_create(dims, len(shape), out), out, temps)


def _array_object(items, temps):
    n = len(items)
    slots = ffi.new("TVMFFIAny[]", max(n, 1))
    for i, item in enumerate(items):
        fill_any(slots + i, item, temps)
    out = _new_obj_out("TVMFFIObject**")
    return _created(lib.mr_array_create(slots, n, out), out, temps)


def _map_object(mapping, temps):
    n = len(mapping)
    keys = ffi.new("TVMFFIAny[]", max(n, 1))
    values = ffi.new("TVMFFIAny[]", max(n, 1))
    for i, (k, v) in enumerate(mapping.items()):
        fill_any(keys + i, k, temps)
        fill_any(values + i, v, temps)
    out = _new_obj_out("TVMFFIObject**")
    return _created(lib.mr_map_create(keys, values, n, out), out, temps)


def fill_any(slot, value, temps):
    """Writes `value` into `slot` (TVMFFIAny*) as a borrowed view.

    Every object this creates is appended to `temps`, which must outlive the call.
    """
    words = ffi.cast("int64_t*", slot)
    words[1] = 0
    if value is None:
        words[0] = NONE
    elif isinstance(value, bool) or isinstance(value, np.bool_):
        words[0] = BOOL
        words[1] = 1 if value else 0
    elif isinstance(value, (int, np.integer)):
        words[0] = INT
        words[1] = int(value)
    elif isinstance(value, (float, np.floating)):
        words[0] = FLOAT
        ffi.cast("double*", slot)[1] = float(value)
    elif isinstance(value, NDArrayView):
        words[0] = DLTENSOR_PTR
        slot.v_ptr = value._dl
    elif isinstance(value, NDArray):
        words[0] = TENSOR
        words[1] = value._addr
    elif isinstance(value, Object):
        if value._handle is None:
            raise TypeError(f"{type(value).__name__} has no runtime object and cannot be "
                            "passed to a function")
        words[0] = lib.mr_object_type_index(value._handle)
        slot.v_obj = value._handle
    elif isinstance(value, DataType):
        words[0] = DATA_TYPE
        words[1] = value.packed
    elif isinstance(value, String):
        words[0] = STR
        slot.v_obj = value.__tvm_object__._handle
    elif isinstance(value, str):
        words[0] = STR
        slot.v_obj = _str_object(value.encode("utf-8"), temps, lib.mr_str_create)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        words[0] = BYTES
        slot.v_obj = _str_object(bytes(value), temps, lib.mr_bytes_create)
    elif isinstance(value, Device):
        words[0] = DEVICE
        words[1] = value.packed
    elif isinstance(value, ShapeTuple):
        words[0] = SHAPE
        slot.v_obj = _shape_object(value, temps)
    elif isinstance(value, (list, tuple)):
        words[0] = ARRAY
        slot.v_obj = _array_object(value, temps)
    elif isinstance(value, np.ndarray):
        nd = numpy_argument(value, temps)
        temps.append(nd)
        fill_any(slot, nd, temps)
    elif isinstance(value, ObjectGeneric):
        obj = value.asobject()
        temps.append(obj)
        fill_any(slot, obj, temps)
    elif isinstance(value, dict):
        words[0] = MAP
        slot.v_obj = _map_object(value, temps)
    elif isinstance(value, OpaqueValue):
        words[0] = OPAQUE_PY_OBJECT
        slot.v_obj = _opaque_object(value, temps)
    elif EXTENSIONS and extension_code(value) is not None:
        _fill_extension(slot, value, extension_code(value))
    elif isinstance(value, ffi.CData) and ffi.typeof(value).kind == "pointer":
        words[0] = OPAQUE_PTR
        slot.v_ptr = value
    elif callable(value):
        words[0] = FUNCTION
        slot.v_obj = _function_object(value, temps)
    else:
        raise TypeError(f"cannot pass a value of type {type(value).__name__} to a "
                        "runtime function")


def _fill_extension(slot, value, code):
    """An instance of a registered extension class: its `_tvm_handle` address as a DLTensor*
    or as an opaque pointer."""
    address = value._tvm_handle
    if not isinstance(address, int) or address < 0:
        raise TypeError(f"{type(value).__name__}._tvm_handle must be an address (int), not "
                        f"{address!r}")
    slot.type_index = DLTENSOR_PTR if code == ArgTypeCode.DLTENSOR_HANDLE else OPAQUE_PTR
    slot.v_ptr = ffi.cast("void*", address)


def set_owned_any(slot, value):
    """Writes `value` into a result slot, which then owns a reference to any object.

    The slot is written only on success: when the conversion raises, it is left as it was.
    """
    temps = []
    value_slot = ffi.new("TVMFFIAny*")
    fill_any(value_slot, value, temps)
    if value_slot.type_index == DLTENSOR_PTR:
        raise TypeError("a tensor view cannot be returned; return an NDArray")
    if value_slot.type_index >= OBJECT:
        lib.mr_object_retain(value_slot.v_obj)
    slot[0] = value_slot[0]


def wrap_object(type_index, obj):
    """The Python value for an owned object reference `obj` (the reference moves into it)."""
    if type_index == STR:  # a String keeps the object: passed on, it is the same object
        owner = Object(obj)
        return String(bytes_of(obj).decode("utf-8", "replace"), owner)
    if type_index == BYTES:
        try:
            return bytes_of(obj)
        finally:
            lib.mr_object_release(obj)
    if type_index == SHAPE:
        try:
            cell = lib.mr_shape_view(obj)
            return ShapeTuple(ffi.unpack(cell.data, cell.size))
        finally:
            lib.mr_object_release(obj)
    if type_index == ARRAY:
        try:
            cell = lib.mr_array_view(obj)
            items = ffi.cast("TVMFFIAny*", cell.data)
            return [borrow_any(items + i) for i in range(cell.size)]
        finally:
            lib.mr_object_release(obj)
    if type_index == OPAQUE_PY_OBJECT:
        value = opaque_value(obj)
        if value is not _FOREIGN:
            lib.mr_object_release(obj)
            return value
    if type_index == ERROR:
        try:
            return make_error(*error_object_parts(obj))
        finally:
            lib.mr_object_release(obj)
    return WRAPPERS.get(type_index, Object)(obj)


def _any_to_py(a, owned):
    t = a.type_index
    if t == NONE:
        return None
    if t == INT:
        return a.v_int64
    if t == FLOAT:
        return a.v_float64
    if t == BOOL:
        return a.v_int64 != 0
    if t >= OBJECT:
        obj = a.v_obj
        if not owned:
            lib.mr_object_retain(obj)
        return wrap_object(t, obj)
    if t == OPAQUE_PTR:
        return None if a.v_ptr == ffi.NULL else a.v_ptr
    if t == DATA_TYPE:
        d = a.v_dtype
        return DataType.from_code(d.code, d.bits, d.lanes)
    if t == DEVICE:
        return Device(a.v_device.device_type, a.v_device.device_id)
    if t == DLTENSOR_PTR:
        return NDArrayView(ffi.cast("DLTensor*", a.v_ptr))
    if t == RAW_STR:
        return ffi.string(a.v_c_str).decode("utf-8", "replace")
    if t == SMALL_STR or t == SMALL_BYTES:
        data = ffi.unpack(a.v_bytes, a.small_str_len)
        return data.decode("utf-8", "replace") if t == SMALL_STR else data
    if t == BYTE_ARRAY_PTR:
        ba = ffi.cast("TVMFFIByteArray*", a.v_ptr)
        return ffi.unpack(ba.data, ba.size)
    raise TypeError(f"cannot convert a value of type index {t} ({type_index_name(t)}) to "
                    "Python")


def _copy_dltensor(dl):
    """A new NDArray holding a copy of the tensor at `dl` (a DLTensor*)."""
    if dl == ffi.NULL:
        raise TypeError("a function returned a NULL DLTensor*")
    view = NDArrayView(dl)
    try:
        return view.copyto(view.device)
    finally:
        view.release()


def take_any(slot):
    """Converts the owned value in `slot` (TVMFFIAny*); the slot is left None.

    A DLTensor* result has no owner and may not outlive the call, so it is copied at once.
    """
    try:
        if slot.type_index == DLTENSOR_PTR:
            return _copy_dltensor(ffi.cast("DLTensor*", slot.v_ptr))
        return _any_to_py(slot, True)
    finally:
        ffi.cast("int64_t*", slot)[0] = NONE


def borrow_any(slot):
    """Converts a borrowed value (TVMFFIAny*); objects get a reference of their own."""
    return _any_to_py(slot, False)



# ---- Python callables as C Functions ---------------------------------------------------------
# address of the handle -> the handle (keeps the callable alive while C holds the Function)
_HANDLES = {}
_HANDLES_LOCK = threading.RLock()  # re-entrant: a deleter may run while it is held


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


def _drop_box(address):
    """One box of a value is gone; the last one drops the value's handle."""
    with _HANDLES_LOCK:
        key = _BOX_OWNER.get(address)
        entry = _BOXES.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _BOXES[key], _BOX_OWNER[address]


@ffi.def_extern()
def _mr_py_value_deleter(handle):
    drop = _drop_box
    if drop is not None:  # None during interpreter shutdown
        drop(int(ffi.cast("uintptr_t", handle)))


def function_from_callable(pyfunc):
    """A new C Function (an owned TVMFFIObject*) that calls the Python callable `pyfunc`."""
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
    return ffi.cast("TVMFFIObject*", out[0])


def _function_object(pyfunc, temps):
    handle = function_from_callable(pyfunc)
    temps.append(Object(handle))
    return handle


# ---- Python values as OpaquePyObjects ------------------------------------------------------
# id(value) -> [its handle, number of live boxes]; the handle keeps the value (and its id) alive
_BOXES = {}
# address of a handle -> id(value), while a box of it lives
_BOX_OWNER = {}
_FOREIGN = object()  # what opaque_value says of a box another binding made


def opaque_from_value(value):
    """A new OpaquePyObject (an owned TVMFFIObject*) holding `value`."""
    with _HANDLES_LOCK:
        entry = _BOXES.get(id(value))
        if entry is None:
            entry = _BOXES[id(value)] = [ffi.new_handle(value), 0]
            _BOX_OWNER[int(ffi.cast("uintptr_t", entry[0]))] = id(value)
        entry[1] += 1
        handle = entry[0]
    out = ffi.new("TVMFFIObjectHandle*")
    status = lib.TVMFFIObjectCreateOpaque(handle, OPAQUE_PY_OBJECT, lib._mr_py_value_deleter,
                                          out)
    if status != 0:
        _drop_box(int(ffi.cast("uintptr_t", handle)))
        check_call(status)
    return ffi.cast("TVMFFIObject*", out[0])


def opaque_value(obj):
    """The Python value an OpaquePyObject `obj` (borrowed) holds; `_FOREIGN` when this binding
    did not make it."""
    handle = lib.mr_opaque_handle(obj)
    with _HANDLES_LOCK:
        key = _BOX_OWNER.get(int(ffi.cast("uintptr_t", handle)))
        entry = _BOXES.get(key) if key is not None else None
    return _FOREIGN if entry is None else ffi.from_handle(entry[0])


def _opaque_object(value, temps):
    handle = opaque_from_value(value)
    temps.append(Object(handle))
    return handle
