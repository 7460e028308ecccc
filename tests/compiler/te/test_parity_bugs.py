"""Schedules classic TVM code writes that once failed: float extents, a split factor larger
than the extent, compute_inline of an argument, cache_write of an index-dependent reducer."""
import numpy as np

from compiler import lower, te, tir


def test_float_extent_is_truncated(run, rng):
    N, bn = 32, 8
    A = te.placeholder((N,), name="A")
    C = te.compute((N / bn, bn), lambda x, y: A[x * bn + y] * 2.0, name="C")
    assert [int(s) for s in C.shape] == [4, 8] and C.shape[0].dtype == "int32"
    s = te.create_schedule(C.op)
    a, c = rng.random(N, dtype="float32"), np.zeros((4, 8), "float32")
    run(s, [A, C], [a, c])
    np.testing.assert_allclose(c, (a * 2).reshape(4, 8))


def test_split_factor_larger_than_extent_is_clamped(run, rng):
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=32)
    s[B].compute_at(s[C], xo)
    a, c = rng.random(8, dtype="float32"), np.zeros(8, "float32")
    text = run(s, [A, C], [a, c])
    assert "range(32)" not in text and "for i.inner in range(8):" in text
    assert "B = allocate(float32, [8]" in text or "[32]" not in text
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)


def test_compute_inline_of_an_argument_leaves_it_unused(run, rng):
    A = te.placeholder((6,), name="A")
    B = te.compute((6,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((6,), lambda i: B[i] * 3.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    a, b, c = rng.random(6, dtype="float32"), np.full(6, -7, "float32"), np.zeros(6, "float32")
    text = run(s, [A, B, C], [a, b, c])
    assert "B[" not in text.split("\n", 1)[1]
    np.testing.assert_allclose(c, (a + 1) * 3, rtol=1e-6)
    np.testing.assert_array_equal(b, np.full(6, -7, "float32"))


def test_cache_write_of_reducer_using_output_index(run, rng):
    n, m = 5, 4
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")

    def body(i):
        # the identity depends on the output index i (a closure)
        red = te.comm_reducer(lambda x, y: x + y, lambda t: tir.Cast(t, i) * 10.0, name="s")
        return red(A[i, k], axis=k)

    C = te.compute((n,), body, name="C")
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    assert CL.op.name == "C.local"
    a, c = rng.random((n, m), dtype="float32"), np.zeros(n, "float32")
    run(s, [A, C], [a, c])
    np.testing.assert_allclose(c, np.arange(n) * 10.0 + a.sum(axis=1), rtol=1e-5)
    assert lower(s, [A, C]) is not None
