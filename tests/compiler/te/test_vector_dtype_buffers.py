"""Placeholders of a vector dtype (`float32x2`: each element is two floats, as in TVM) are
indexed by element, not by scalar: every element of the output is right on both targets, and
the flattened IR reads `Ramp(i * lanes, 1, lanes)`."""
import numpy as np

import compiler
import microruntime
from compiler import te
from compiler.tir import expr as E
from compiler.tir.transform.storage_flatten import storage_flatten


def _nd(x, shape, dtype):
    out = microruntime.nd.empty(shape, dtype)
    out.copyfrom(x)
    return out


def test_one_dim_every_element(target):
    X = te.placeholder((64,), name="X", dtype="float32x2")
    Y = te.compute((64,), lambda i: X[i] + X[i], name="Y")
    f = compiler.build(te.create_schedule(Y.op), [X, Y], target=target, name="f")
    x = np.arange(128, dtype="float32").reshape(64, 2)
    y = microruntime.nd.empty((64,), "float32x2")
    f["f"](_nd(x, (64,), "float32x2"), y)
    np.testing.assert_array_equal(y.numpy(), 2 * x)   # elements 32..63 were garbage before


def test_two_dims_four_lanes(target):
    X = te.placeholder((4, 6), name="X", dtype="float32x4")
    Y = te.compute((4, 6), lambda i, j: X[i, j] * X[i, j], name="Y")
    f = compiler.build(te.create_schedule(Y.op), [X, Y], target=target, name="g")
    x = np.random.default_rng(0).random((4, 6, 4), dtype="float32")
    y = microruntime.nd.empty((4, 6), "float32x4")
    f["g"](_nd(x, (4, 6), "float32x4"), y)
    np.testing.assert_allclose(y.numpy(), x * x, rtol=1e-6)


def test_flattened_index_is_a_ramp_over_the_lanes():
    X = te.placeholder((8,), name="X", dtype="int32x4")
    Y = te.compute((8,), lambda i: X[i], name="Y")
    mod = storage_flatten(compiler.lower(te.create_schedule(Y.op), [X, Y]))
    store = mod["main"].body.body
    assert store.buffer.dtype == "int32" and int(store.buffer.shape[0]) == 32
    (index,) = store.indices
    assert isinstance(index, E.Ramp) and index.lanes == 4 and int(index.stride) == 1


def test_vectorized_loop_over_a_vector_dtype_buffer(target):
    X = te.placeholder((8,), name="X", dtype="float32x2")
    Y = te.compute((8,), lambda i: X[i] * 3.0, name="Y")
    s = te.create_schedule(Y.op)
    s[Y].vectorize(Y.op.axis[0])
    f = compiler.build(s, [X, Y], target=target, name="h")
    x = np.arange(16, dtype="float32").reshape(8, 2)
    y = microruntime.nd.empty((8,), "float32x2")
    f["h"](_nd(x, (8,), "float32x2"), y)
    np.testing.assert_array_equal(y.numpy(), 3 * x)
