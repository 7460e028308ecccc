"""microruntime._ffi_api (`tvm.runtime._ffi_api`): `runtime.*` global functions as attributes,
and the module properties behind ModuleGetPropertyMask."""
import pytest

import microruntime as mr
from microruntime import _ffi_api


def test_runtime_globals_are_attributes():
    mr.register_func("runtime.KilnTestTwice", lambda x: 2 * x, override=True)
    try:
        assert _ffi_api.KilnTestTwice(21) == 42
    finally:
        mr.remove_global_func("runtime.KilnTestTwice")
    with pytest.raises(AttributeError, match="runtime.KilnTestTwice"):
        _ = _ffi_api.KilnTestTwice


def test_property_mask_of_a_library_and_a_static_library(kernels):
    lib = mr.load_module(kernels.so("add"))
    assert lib.is_runnable and not lib.is_binary_serializable and not lib.is_dso_exportable
    assert _ffi_api.ModuleGetPropertyMask(lib) == 2 == lib.get_property_mask()
    static = mr.load_static_library(kernels.obj("add"), ["add"])
    assert not static.is_runnable and static.is_dso_exportable
    assert static.get_property_mask() == 4
    with pytest.raises(TypeError, match="expects a Module"):
        _ffi_api.ModuleGetPropertyMask(3)
