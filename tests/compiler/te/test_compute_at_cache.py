"""compute_at, cache_write and cache_read: where stages land and that values stay right."""
import numpy as np

from compiler import te


def _chain(n):
    A = te.placeholder((n,), name="A")
    T = te.compute((n,), lambda i: A[i] * 2.0, name="T")
    B = te.compute((n,), lambda i: T[i] + 1.0, name="B")
    return A, T, B


def test_compute_at_allocates_only_the_tile(run, rng):
    A, T, B = _chain(12)
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[T].compute_at(s[B], xo)
    a, b = rng.random(12, dtype="float32"), np.zeros(12, "float32")
    text = run(s, [A, B], [a, b])
    lines = [ln.strip() for ln in text.splitlines()]
    at = lines.index("for i.outer in range(3):")
    assert lines[at + 1] == "T = allocate([4], float32, 'global')"
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


def test_compute_at_symbolic_non_divisible(run, rng):
    n = te.var("n")
    A, T, B = _chain(n)
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=3)
    s[T].compute_at(s[B], xo)
    for size in (1, 5, 9):
        a, b = rng.random(size, dtype="float32"), np.zeros(size, "float32")
        run(s, [A, B], [a, b])
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


def test_compute_at_stencil_region(run, rng):
    A = te.placeholder((10,), name="A")
    T = te.compute((10,), lambda i: A[i] + 1.0, name="T")
    B = te.compute((8,), lambda i: T[i] + T[i + 2], name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[T].compute_at(s[B], xo)
    a, b = rng.random(10, dtype="float32"), np.zeros(8, "float32")
    text = run(s, [A, B], [a, b])
    assert "T = allocate([6], float32, 'global')" in text
    np.testing.assert_allclose(b, (a[:8] + 1) + (a[2:] + 1), rtol=1e-6)


def test_cache_write_local_in_tile(run, rng):
    A = te.placeholder((8, 6), name="A")
    W = te.placeholder((6, 12), name="W")
    k = te.reduce_axis((0, 6), name="k")
    C = te.compute((8, 12), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    io, jo, ii, ji = s[C].tile(*C.op.axis, 4, 4)
    s[CC].compute_at(s[C], jo)
    x, y = s[CC].op.axis
    (kk,) = s[CC].op.reduce_axis
    s[CC].reorder(kk, x, y)
    s[CC].vectorize(y)
    a, w = rng.random((8, 6), dtype="float32"), rng.random((6, 12), dtype="float32")
    c = np.zeros((8, 12), "float32")
    text = run(s, [A, W, C], [a, w, c])
    assert "C.local = allocate([16], float32, 'local')" in text
    assert "C.local[ramp(i.c * 4, 1, 4)]" in text
    np.testing.assert_allclose(c, a @ w, rtol=1e-5)


def test_cache_read_shared(run, rng):
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 3.0, name="B")
    s = te.create_schedule(B.op)
    AA = s.cache_read(A, "shared", [B])
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[AA].compute_at(s[B], xo)
    a, b = rng.random(8, dtype="float32"), np.zeros(8, "float32")
    text = run(s, [A, B], [a, b])
    # shared under threadIdx covers the whole block's rows (4 threads x 4 k), as TVM
    assert "A.shared = allocate([16], float32, 'shared')" in text
    np.testing.assert_allclose(b, a * 3, rtol=1e-6)


def test_set_scope_and_root_intermediates_share_storage(run, rng):
    A = te.placeholder((8,), name="A")
    T1 = te.compute((8,), lambda i: A[i] + 1.0, name="T1")
    T2 = te.compute((8,), lambda i: T1[i] * 2.0, name="T2")
    T3 = te.compute((8,), lambda i: T2[i] - 3.0, name="T3")
    B = te.compute((8,), lambda i: T3[i] * 0.5, name="B")
    s = te.create_schedule(B.op)
    s[T1].set_scope("local")
    a, b = rng.random(8, dtype="float32"), np.zeros(8, "float32")
    text = run(s, [A, B], [a, b])
    assert "T1 = allocate([8], float32, 'local')" in text
    assert text.count("allocate(") == 3  # T1 and T3 could share, but T1 is local
    np.testing.assert_allclose(b, ((a + 1) * 2 - 3) * 0.5, rtol=1e-6)


def test_nested_attach_with_thread_binding(run, rng):
    n = 16
    A = te.placeholder((n, n), name="A")
    W = te.placeholder((n, n), name="W")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    AS = s.cache_read(A, "shared", [C])
    CL = s.cache_write(C, "local")
    io, ii = s[C].split(C.op.axis[0], factor=4)
    s[C].bind(io, te.thread_axis("blockIdx.x"))
    s[C].bind(ii, te.thread_axis("threadIdx.x"))
    s[CL].compute_at(s[C], ii)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=4)
    s[AS].compute_at(s[CL], ko)
    a, w = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    text = run(s, [A, W, C], [a, w, c])
    # shared under threadIdx covers the whole block's rows (4 threads x 4 k), as TVM
    assert "A.shared = allocate([16], float32, 'shared')" in text
    assert "C.local = allocate([16], float32, 'local')" in text
    np.testing.assert_allclose(c, a @ w, rtol=1e-5)


def test_split_producer_at_consumer_stays_in_its_region(run):
    """T computed at B's i needs one row, but T's own split by 2 runs two: the row past the
    region must be skipped (not written past T's one-row allocation)."""
    A = te.placeholder((2, 1), name="A")
    T = te.compute((2, 1), lambda i, j: A[i, j] * 2.0, name="T")
    B = te.compute((2, 1), lambda i, j: T[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[T].split(T.op.axis[0], factor=2)
    s[T].compute_at(s[B], B.op.axis[0])
    a, b = np.array([[1.0], [2.0]], "float32"), np.zeros((2, 1), "float32")
    text = run(s, [A, B], [a, b])
    assert "T = allocate([1], float32, 'global')" in text
    np.testing.assert_array_equal(b, a * 2 + 1)
