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


HUGE = (1 << 59, 10)  # 10 * 2^59 float32 elements: the byte size overflows 64 bits


@pytest.mark.parametrize("name", ["reshape", "alloc_tensor"])
def test_views_whose_size_overflows_are_refused(name):
    """A view's byte size that overflows used to read as 0 bytes and fit in any base; the next
    kernel then ran off the end of the base."""
    func = mr.get_global_func(f"vm.builtin.{name}")
    if name == "reshape":
        args = (nd.empty((0,), "float32"), mr.ShapeTuple(HUGE))
    else:
        args = (nd.empty((0,), "uint8"), 0, mr.ShapeTuple(HUGE), mr.DataType("float32"))
    with pytest.raises(ValueError, match=rf"vm\.builtin\.{name}: tensor of shape "
                       r"\(576460752303423488, 10\) float32 is too large \(size overflows\)"):
        func(*args)
    # the same view of a fitting size still works
    ok = func(nd.empty((12,), "float32"), mr.ShapeTuple((3, 4))) if name == "reshape" else \
        func(nd.empty((48,), "uint8"), 0, mr.ShapeTuple((3, 4)), mr.DataType("float32"))
    assert ok.shape == (3, 4) and ok.dtype == "float32"


def test_arrays_whose_size_overflows_are_refused():
    with pytest.raises(ValueError, match="is too large"):
        nd.empty(HUGE, "float32")
    with pytest.raises(ValueError, match=r"tensor of shape \(2305843009213693952,\) float32 is "
                       r"too large \(size overflows\)"):
        nd.empty((1 << 61,), "float32")


@pytest.mark.parametrize("dtype", ["float33", "float8", "int3", "bfloat32", "float32x0",
                                   "float32x", "int8x65536", "handle32", "float032"])
def test_invalid_dtype_strings_are_refused(dtype):
    with pytest.raises(ValueError, match=f"unknown data type '{dtype}'"):
        nd.empty((2,), dtype)


def test_bfloat16_copyfrom_uint16_takes_the_bits():
    pytest.importorskip("ml_dtypes")
    x = np.array([1.0, -1.5, 0.0, 3.140625], dtype="float32")
    bits = (x.view("uint32") >> 16).astype("uint16")  # these floats are exact in bfloat16
    a = mr.nd.empty((4,), "bfloat16")
    a.copyfrom(bits)
    np.testing.assert_array_equal(a.numpy().view("uint16"), bits)
    np.testing.assert_array_equal(a.numpy().astype("float32"), x)
    a.copyfrom(np.array([2.0, 4.0, 8.0, 0.5], dtype="float32"))  # other sources: values
    np.testing.assert_array_equal(a.numpy().astype("float32"), [2.0, 4.0, 8.0, 0.5])
    i16 = mr.nd.empty((4,), "int32")
    i16.copyfrom(bits)  # a uint16 source for another dtype converts values
    np.testing.assert_array_equal(i16.numpy(), bits.astype("int32"))
