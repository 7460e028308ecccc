"""thread_sync: barriers between threads' shared-memory accesses, none where each thread only
touches its own elements. Checked on the OpenCL source of small kernels (one barrier is one
`barrier(CLK_LOCAL_MEM_FENCE);`) and, where a device is present, by running them."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, topi
from compiler.target import Target
from compiler.topi.cuda import reduction

BARRIER = "barrier(CLK_LOCAL_MEM_FENCE);"


def _dense_cross_thread(n=10, k=512, nthreads=64):
    X = te.placeholder((1, k), name="X")
    W = te.placeholder((n, k), name="W")
    D = topi.nn.dense(X, W)
    tgt = Target("opencl", host="llvm")
    with tgt:
        s = te.create_schedule(D.op)
        reduction.cross_thread_reduce(s, D.op, D.op, nthreads=nthreads)
        return compiler.build(s, [X, W, D], target=tgt, name="d")


def test_private_accumulator_needs_no_barrier_per_iteration():
    """rf[tx] += ... in a loop: each thread its own element, so the only barrier is the one
    before another thread reads the partial sums."""
    mod = _dense_cross_thread()
    text = mod.imported_modules[0].get_source()
    assert text.count(BARRIER) == 1, text
    loop = text.index("for (")
    assert text.index(BARRIER) > text.index("}", loop)   # after the accumulation loop
    if microruntime.enabled("opencl"):
        dev = microruntime.opencl(0)
        rng = np.random.default_rng(0)
        x, w = rng.standard_normal((1, 512), "float32"), rng.standard_normal((10, 512), "float32")
        a = [microruntime.nd.array(v, dev) for v in (x, w, np.zeros((1, 10), "float32"))]
        mod["d"](*a)
        np.testing.assert_allclose(a[2].numpy(), x @ w.T, rtol=1e-4, atol=1e-4)


def _shared_kernel(index_of):
    """B[i] = S[index_of(tx)] where S[tx] = A[i] * 2 was stored just before: one block of 64."""
    n = 64
    A = te.placeholder((n,), name="A")
    S = te.compute((n,), lambda i: A[i] * 2.0, name="S")
    B = te.compute((n,), lambda i: S[index_of(i)], name="B")
    s = te.create_schedule(B.op)
    s[S].set_scope("shared")
    bo, bi = s[B].split(B.op.axis[0], factor=n)
    s[B].bind(bo, te.thread_axis("blockIdx.x"))
    s[B].bind(bi, te.thread_axis("threadIdx.x"))
    s[S].compute_at(s[B], bo)
    s[S].bind(S.op.axis[0], te.thread_axis("threadIdx.x"))
    tgt = Target("opencl", host="llvm")
    return compiler.build(s, [A, B], target=tgt, name="k")


@pytest.mark.parametrize("index_of, barriers", [
    (lambda i: i, 0),          # its own element, through another loop bound to threadIdx.x
    (lambda i: 63 - i, 1),     # another thread's element: a barrier
    (lambda i: i // 2, 1),     # two threads read one element, written by one of them
])
def test_barrier_only_for_other_threads_elements(index_of, barriers):
    mod = _shared_kernel(index_of)
    assert mod.imported_modules[0].get_source().count(BARRIER) == barriers
    if microruntime.enabled("opencl"):
        dev = microruntime.opencl(0)
        x = np.arange(64, dtype="float32")
        a, b = microruntime.nd.array(x, dev), microruntime.nd.array(np.zeros(64, "float32"), dev)
        mod["k"](a, b)
        want = 2 * x[[index_of(i) for i in range(64)]]
        np.testing.assert_array_equal(b.numpy(), want)
