"""The `tuple_inputs` tutorial: multi-output compute and a tuple reducer (argmax), built and run."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te, tir


def test_multi_output_compute(target):
    n, m = te.var("n"), te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")
    s = te.create_schedule(B0.op)
    f = build(s, [A0, A1, B0, B1], target=target, name="multi")
    a0, a1 = np.random.rand(3, 5).astype("float32"), np.random.rand(3, 5).astype("float32")
    b0, b1 = runtime.nd.empty((3, 5), B0.dtype), runtime.nd.empty((3, 5), B1.dtype)
    f["multi"](runtime.nd.array(a0), runtime.nd.array(a1), b0, b1)
    np.testing.assert_allclose(b0.numpy(), a0 + 2, rtol=1e-6)
    np.testing.assert_allclose(b1.numpy(), a1 * 3, rtol=1e-6)


def _argmax():
    def fcombine(x, y):  # x and y are (index, value) tuples, as in TVM
        lhs = tir.Select((x[1] >= y[1]), x[0], y[0])
        rhs = tir.Select((x[1] >= y[1]), x[1], y[1])
        return lhs, rhs

    def fidentity(t0, t1):
        return tir.const(-1, t0), te.min_value(t1)

    return te.comm_reducer(fcombine, fidentity, name="argmax")


def test_argmax_reducer_gets_tuples(target):
    argmax = _argmax()
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="int32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")
    s = te.create_schedule(T0.op)
    assert "for k in range(n):" in str(lower(s, [idx, val, T0, T1], simple_mode=True))
    f = build(s, [idx, val, T0, T1], target=target, name="argmax")
    rng = np.random.default_rng(1)
    iv = np.tile(np.arange(7, dtype="int32"), (4, 1))
    vv = rng.integers(-50, 50, size=(4, 7)).astype("int32")
    t0, t1 = runtime.nd.empty((4,), "int32"), runtime.nd.empty((4,), "int32")
    f["argmax"](runtime.nd.array(iv), runtime.nd.array(vv), t0, t1)
    np.testing.assert_array_equal(t1.numpy(), vv.max(axis=1))
    # `>=` keeps the earlier index on ties, so the result is numpy's argmax
    np.testing.assert_array_equal(t0.numpy(), vv.argmax(axis=1))
