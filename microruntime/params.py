"""save_param_dict / load_param_dict: TVM's parameter-dict binary format (done in C)."""
from ._loader import ffi, lib
from .abi import TypeIndex
from .base import check_call, last_error
from .convert import wrap_object
from .ndarray import NDArray, array


def save_param_dict(params):
    """Serialises {name: NDArray or array-like} into TVM's format; returns a bytearray."""
    names, tensors = [], []
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError(f"parameter names must be str, not {type(name).__name__}")
        if "\0" in name:
            # The C API takes NUL-terminated names: "a\0b" would be saved as "a".
            raise ValueError(f"parameter name {name!r} contains a NUL character")
        names.append(ffi.new("char[]", name.encode("utf-8")))
        tensors.append(value if isinstance(value, NDArray) else array(value))
    c_names = ffi.new("const char*[]", names)
    c_tensors = ffi.new("TVMFFIObject*[]", [t._handle for t in tensors])
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_params_save(c_names, c_tensors, len(names), out))
    try:  # one copy, from the runtime's bytes into the bytearray
        view = lib.mr_bytes_view(out[0])
        return bytearray(ffi.buffer(view.data, view.size))
    finally:
        lib.mr_object_release(out[0])


def load_param_dict(param_bytes):
    """Parses a parameter blob into {name: NDArray} (CPU); ValueError on a malformed blob."""
    if isinstance(param_bytes, str):
        raise TypeError("load_param_dict expects bytes, not str")
    data = bytes(param_bytes)
    names = ffi.new("TVMFFIObject**")
    tensors = ffi.new("TVMFFIObject**")
    if lib.mr_params_load(ffi.from_buffer(data), len(data), names, tensors) != 0:
        err = last_error()
        if isinstance(err, ValueError):
            raise err
        raise ValueError(str(err)) from err
    keys = wrap_object(TypeIndex.ARRAY, names[0])
    values = wrap_object(TypeIndex.ARRAY, tensors[0])
    return dict(zip(keys, values))


def save_param_dict_to_file(params, path):
    """Writes `save_param_dict(params)` to the file `path`."""
    data = save_param_dict(params)
    with open(path, "wb") as f:
        f.write(data)


def load_param_dict_from_file(path):
    """The {name: NDArray} that the parameter file `path` holds."""
    with open(path, "rb") as f:
        return load_param_dict(f.read())
