"""Kernels the build tests share (te schedules), so each test states only what it checks."""
from compiler import te


def vector_add(dtype="float32"):
    n = te.var("n")
    A = te.placeholder((n,), name="A", dtype=dtype)
    B = te.placeholder((n,), name="B", dtype=dtype)
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), [A, B, C]


def matmul(n=128, factor_i=16, factor_j=8, parallel=True, vectorize=True):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    i, j = s[C].op.axis
    io, ii = s[C].split(i, factor=factor_i)
    jo, ji = s[C].split(j, factor=factor_j)
    s[C].reorder(io, jo, k, ii, ji)
    if vectorize:
        s[C].vectorize(ji)
    if parallel:
        s[C].parallel(io)
    return s, [A, B, C]
