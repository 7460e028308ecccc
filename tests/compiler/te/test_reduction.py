"""Reductions: sum/max/min over one or several axes, split/reordered reduce axes, where=."""
import numpy as np
import pytest

from compiler import te


def _matmul(M=8, N=12, K=6):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def _run_mm(run, s, A, B, C, rng):
    a = rng.random((8, 6), dtype="float32")
    b = rng.random((6, 12), dtype="float32")
    c = np.zeros((8, 12), "float32")
    text = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    return text


def test_matmul_default(run, rng):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    text = _run_mm(run, s, A, B, C, rng)
    assert "C[i * 12 + j] = 0.0" in text and "for k in range(6):" in text


def test_matmul_split_reorder_vectorize_parallel(run, rng):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    io, jo, ii, ji = s[C].tile(*C.op.axis, 4, 4)
    ko, ki = s[C].split(s[C].op.reduce_axis[0], factor=2)
    s[C].reorder(io, jo, ko, ii, ki, ji)
    s[C].vectorize(ji)
    s[C].parallel(io)
    text = _run_mm(run, s, A, B, C, rng)
    loops = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("for")]
    assert loops == ["for i.outer in range(2):  # parallel", "for j.outer in range(3):",
                     "for i.inner.init in range(4):", "for k.outer in range(3):",
                     "for i.inner in range(4):", "for k.inner in range(2):"]
    assert "broadcast(0.0, 4)" in text


def test_reduce_axis_outermost(run, rng):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    (k,) = s[C].op.reduce_axis
    s[C].reorder(k, i, j)
    text = _run_mm(run, s, A, B, C, rng)
    assert text.index("for i.init") < text.index("for k in range(6):")


@pytest.mark.parametrize("name, ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_reducers_over_two_axes(run, rng, name, ref):
    A = te.placeholder((4, 5, 6), name="A")
    k1, k2 = te.reduce_axis((0, 5), "k1"), te.reduce_axis((0, 6), "k2")
    R = te.compute((4,), lambda i: getattr(te, name)(A[i, k1, k2], axis=[k1, k2]), name="R")
    s = te.create_schedule(R.op)
    s[R].fuse(k1, k2)
    a, r = rng.random((4, 5, 6), dtype="float32"), np.zeros(4, "float32")
    text = run(s, [A, R], [a, r])
    assert "for k1.k2.fused in range(30):" in text
    np.testing.assert_allclose(r, ref(a, axis=(1, 2)), rtol=1e-5)


def test_where_condition(run, rng):
    A = te.placeholder((6, 6), name="A")
    k = te.reduce_axis((0, 6), "k")
    R = te.compute((6,), lambda i: te.sum(A[i, k], axis=k, where=k <= i), name="R")
    s = te.create_schedule(R.op)
    a, r = rng.random((6, 6), dtype="float32"), np.zeros(6, "float32")
    run(s, [A, R], [a, r])
    np.testing.assert_allclose(r, np.tril(a).sum(axis=1), rtol=1e-5)


def test_non_divisible_reduce_split(run, rng):
    A = te.placeholder((3, 7), name="A")
    k = te.reduce_axis((0, 7), "k")
    R = te.compute((3,), lambda i: te.sum(A[i, k], axis=k), name="R")
    s = te.create_schedule(R.op)
    s[R].split(k, factor=3)
    a, r = rng.random((3, 7), dtype="float32"), np.zeros(3, "float32")
    text = run(s, [A, R], [a, r])
    assert "if k.outer * 3 + k.inner < 7:" in text
    np.testing.assert_allclose(r, a.sum(axis=1), rtol=1e-5)


def test_comm_reducer_argmax(run, rng):
    argmax = te.comm_reducer(
        lambda x, y: (te.select(x[1] >= y[1], x[0], y[0]), te.select(x[1] >= y[1], x[1], y[1])),
        lambda t0, t1: (te.const(-1, t0), te.min_value(t1)), name="argmax")
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), "k")
    idx, val = te.compute((4,), lambda i: argmax((k.var, A[i, k]), axis=k), name="am")
    s = te.create_schedule(idx.op)
    a = rng.random((4, 6), dtype="float32")
    oi, ov = np.zeros(4, "int32"), np.zeros(4, "float32")
    run(s, [A, idx, val], [a, oi, ov])
    np.testing.assert_array_equal(oi, a.argmax(axis=1))
    np.testing.assert_allclose(ov, a.max(axis=1))


def test_elementwise_max_min():
    a, b = te.var("a"), te.var("b")
    assert "max(a, b)" == str(te.max(a, b)) and "min(a, b)" == str(te.min(a, b))
