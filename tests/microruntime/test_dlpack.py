import numpy as np
import pytest

import microruntime as mr
from microruntime import nd


@pytest.mark.parametrize("dtype", ["float32", "int8", "float16", "int64", "uint8", "bool"])
def test_numpy_to_ndarray_zero_copy(dtype):
    src = np.zeros((4, 3), dtype)
    arr = mr.from_dlpack(src)
    assert arr.shape == (4, 3) and arr.dtype == dtype
    src[1, 2] = 1
    assert arr.numpy()[1, 2] == 1
    arr.copyfrom(np.ones((4, 3), dtype))
    assert src.all()


def test_ndarray_to_numpy_zero_copy():
    arr = nd.array(np.arange(6, dtype="float32"))
    view = np.from_dlpack(arr)
    assert view.dtype == np.float32 and view.shape == (6,)
    view[0] = 42
    assert arr.numpy()[0] == 42
    arr.copyfrom(np.full(6, 7, "float32"))
    assert (view == 7).all()
    del arr  # the view keeps the memory alive
    assert view.sum() == 42


def test_capsules_both_versions():
    arr = nd.array(np.arange(3, dtype="int32"))
    legacy = arr.__dlpack__()
    versioned = arr.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(legacy) and "dltensor_versioned" in repr(versioned)
    assert arr.__dlpack_device__() == (1, 0)
    a = nd.from_dlpack(legacy)
    b = nd.from_dlpack(versioned)
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2])
    np.testing.assert_array_equal(b.numpy(), [0, 1, 2])
    assert a._dl.data == arr._dl.data == b._dl.data
    with pytest.raises(ValueError, match="used already"):
        nd.from_dlpack(legacy)
    # unconsumed capsules are freed by their destructor
    for _ in range(100):
        arr.__dlpack__()
        arr.__dlpack__(max_version=(1, 1))


def test_round_trip_through_numpy_and_back():
    arr = nd.array(np.arange(4, dtype="float64"))
    again = mr.from_dlpack(np.from_dlpack(arr))
    assert again._dl.data == arr._dl.data
    assert mr.from_dlpack(arr) is arr


def test_from_dlpack_rejects_non_producers():
    with pytest.raises(TypeError, match="does not support DLPack"):
        mr.from_dlpack([1, 2, 3])


def test_strided_view_round_trips_to_numpy():
    base = np.arange(40, dtype="float32").reshape(5, 8)
    view = base[1:4, ::3]
    t = nd.from_dlpack(view)
    assert t.strides == (8, 3)
    np.testing.assert_array_equal(t.numpy(), view)
    base[2, 3] = -1.0  # zero-copy: the runtime tensor sees the change
    assert t.numpy()[1, 1] == -1.0


def test_read_only_producer_is_refused_not_made_writable():
    src = np.arange(4, dtype="float32")
    src.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        nd.from_dlpack(src)  # numpy exports it with DLPACK_FLAG_BITMASK_READ_ONLY
    np.testing.assert_array_equal(src, [0, 1, 2, 3])
    # an unconsumed capsule still belongs to the producer and is freed by its destructor
    capsule = src.__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError):
        nd.from_dlpack(capsule)
    del capsule
    # an explicit copy works (passed directly to a function, it is refused: see test_module)
    assert nd.array(src).numpy().tolist() == [0, 1, 2, 3]


def test_copy_between_overlapping_imports():
    buf = np.zeros(1040, dtype="float32")
    a, b = buf[0:1024], buf[1:1025]
    a[:] = np.arange(1024)
    nd.from_dlpack(a).copyto(nd.from_dlpack(b))  # the two share memory
    np.testing.assert_array_equal(b, np.arange(1024, dtype="float32"))
