import numpy as np
import pytest

import microruntime as mr
from microruntime import nd
from microruntime._loader import ffi

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 1, 4)])
def test_numpy_round_trip(dtype, shape):
    rng = np.random.default_rng(0)
    src = (rng.standard_normal(shape) * 50).astype(dtype)
    arr = nd.array(src)
    assert arr.shape == shape and arr.dtype == dtype and arr.device == mr.cpu(0)
    assert arr.ndim == len(shape)
    out = arr.numpy()
    assert out.dtype == src.dtype and out.shape == shape
    np.testing.assert_array_equal(out, src)


def test_data_is_aligned_and_array_options():
    arr = nd.empty((7,), "float32")
    assert arr.handle != ffi.NULL
    assert int(ffi.cast("uintptr_t", arr._dl.data)) % 64 == 0
    assert nd.array([1, 2, 3], dtype="int8").dtype == "int8"
    assert nd.array([[1.5]]).dtype == "float64"
    assert mr.tensor(np.ones(2, "float32")).shape == (2,)
    assert nd.empty(3).shape == (3,) and nd.empty([2, 2], "int8").dtype == "int8"


def test_copyfrom_copyto():
    a = nd.empty((2, 3), "float32")
    src = np.arange(6, dtype="float32").reshape(2, 3)
    assert a.copyfrom(src) is a
    np.testing.assert_array_equal(a.numpy(), src)
    a.copyfrom(src.tolist())
    b = nd.empty((2, 3), "float32")
    a.copyto(b)
    np.testing.assert_array_equal(b.numpy(), src)
    c = a.copyto(mr.cpu(0))
    assert c.shape == (2, 3) and not c.same_as(a)
    d = nd.empty((2, 3), "float32").copyfrom(c)
    np.testing.assert_array_equal(d.numpy(), src)
    d[:] = np.zeros((2, 3), "float32")
    assert d.numpy().sum() == 0
    # non-contiguous sources are compacted
    e = nd.empty((3,), "float32").copyfrom(np.arange(6, dtype="float32")[::2])
    np.testing.assert_array_equal(e.numpy(), [0, 2, 4])


def test_bad_shapes_and_dtypes():
    a = nd.empty((2, 3), "float32")
    with pytest.raises(ValueError, match=r"shape \(3, 2\) does not match"):
        a.copyfrom(np.zeros((3, 2), "float32"))
    with pytest.raises(ValueError, match="cannot copy"):
        a.copyfrom(nd.empty((6,), "float32"))
    with pytest.raises(ValueError, match="cannot copy"):
        a.copyto(nd.empty((2, 3), "int32"))
    with pytest.raises(ValueError, match="non-negative"):
        nd.empty((-1, 2))
    with pytest.raises(ValueError, match="unknown data type"):
        nd.empty((2,), "floot32")
    with pytest.raises(TypeError):
        a.copyto("cpu")
    with pytest.raises(TypeError, match="cannot copy"):
        a.copyfrom(object())


def test_repr_and_str():
    a = nd.array(np.array([1, 2], "int32"))
    assert "cpu(0)" in repr(a) and "[1 2]" in str(a)


def test_vector_lanes():
    a = nd.empty((3,), "float32x4")
    src = np.arange(12, dtype="float32").reshape(3, 4)
    a.copyfrom(src)
    np.testing.assert_array_equal(a.numpy(), src)
