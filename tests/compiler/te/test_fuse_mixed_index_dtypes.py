"""Fusing an int64 (symbolic) axis with an int32 one: the fused axis is int64, splits of it
take int64 factors, and each part's value (and range, under compute_at) is cast back to its
own dtype, so the lowered IR verifies and computes the right thing."""
import numpy as np

from compiler import te


def test_fuse_int64_with_int32_axis_then_split(run, rng):
    n = te.var("n", "int64")
    A = te.placeholder((n, 6), name="A")
    B = te.compute((n, 6), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    i, j = B.op.axis
    assert str(i.var.dtype) == "int64" and str(j.var.dtype) == "int32"
    fused = s[B].fuse(i, j)
    assert str(fused.var.dtype) == "int64"
    s[B].split(fused, factor=4)
    a = rng.random((5, 6), dtype="float32")
    b = np.zeros((5, 6), "float32")
    run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a * 2, rtol=1e-6)


def test_reduction_computed_at_fused_int64_axis(run, rng):
    n = te.var("n", "int64")
    A = te.placeholder((n, 6, 3), name="A")
    k = te.reduce_axis((0, 3), "k")
    S = te.compute((n, 6), lambda i, j: te.sum(A[i, j, k], axis=k), name="S")
    R = te.compute((n, 6), lambda i, j: te.max(S[i, j], 0.0), name="R")
    s = te.create_schedule(R.op)
    fused = s[R].fuse(*R.op.axis)
    _, inner = s[R].split(fused, factor=4)
    s[S].compute_at(s[R], inner)
    a = rng.standard_normal((3, 6, 3)).astype("float32")
    r = np.zeros((3, 6), "float32")
    run(s, [A, R], [a, r])
    np.testing.assert_allclose(r, np.maximum(a.sum(axis=2), 0), rtol=1e-5, atol=1e-6)
