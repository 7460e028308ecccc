"""register_extension: instances of a registered class pass to a function as the DLTensor*
(or opaque pointer) their `_tvm_handle` gives."""
import numpy as np
import pytest

import microruntime as mr
from microruntime.runtime_ctypes import ArgTypeCode


@mr.register_extension
class TensorView:
    _tvm_tcode = ArgTypeCode.DLTENSOR_HANDLE

    def __init__(self, arr):
        self.arr = arr

    @property
    def _tvm_handle(self):
        return self.arr._tvm_handle


class NamedTensorView(TensorView):  # a subclass of a registered class passes as it does
    pass


def test_extension_instances_pass_as_dltensors(kernels):
    add = mr.load_module(kernels.so("add"))["add"]
    a = mr.nd.array(np.arange(8, dtype="float32"))
    b = mr.nd.array(np.full(8, 2.0, dtype="float32"))
    c = mr.nd.empty((8,), "float32")
    add(TensorView(a), NamedTensorView(b), TensorView(c))
    np.testing.assert_array_equal(c.numpy(), np.arange(8, dtype="float32") + 2)


def test_python_callee_sees_the_tensor():
    seen = []
    mr.register_func("test.extension_shape", lambda t: seen.append(t.shape), override=True)
    arr = mr.nd.array(np.zeros((2, 5), dtype="int64"))
    mr.get_global_func("test.extension_shape")(TensorView(arr))
    assert seen == [(2, 5)]


def test_opaque_handle_extension():
    @mr.register_extension
    class Handle:
        _tvm_tcode = ArgTypeCode.HANDLE

        def __init__(self, address):
            self.address = address

        @property
        def _tvm_handle(self):
            return self.address

    got = []
    mr.register_func("test.extension_ptr", lambda p: got.append(p), override=True)
    mr.get_global_func("test.extension_ptr")(Handle(0x1234))
    assert int(mr._loader.ffi.cast("uintptr_t", got[0])) == 0x1234


def test_registration_checks_the_type_code():
    class Bad:
        _tvm_tcode = ArgTypeCode.STR
        _tvm_handle = 0

    with pytest.raises(ValueError, match="_tvm_tcode"):
        mr.register_extension(Bad)
    with pytest.raises(ValueError, match="fcreate"):
        mr.register_extension(TensorView, fcreate=lambda h: h)
