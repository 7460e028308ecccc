"""Row softmax: one thread per row, the row max and exp-sum computed at the thread's loop
(stored "local", inferred from the thread-bound attach point)."""
import numpy as np
from gpu_harness import build, ptx_of, run_opencl

from compiler import te


def softmax(rows=37, cols=19):
    X = te.placeholder((rows, cols), name="X")
    k1 = te.reduce_axis((0, cols), name="k1")
    k2 = te.reduce_axis((0, cols), name="k2")
    mx = te.compute((rows,), lambda i: te.max(X[i, k1], axis=k1), name="mx")
    ex = te.compute((rows, cols), lambda i, j: te.exp(X[i, j] - mx[i]), name="ex")
    sm = te.compute((rows,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    Y = te.compute((rows, cols), lambda i, j: ex[i, j] / sm[i], name="Y")
    s = te.create_schedule(Y.op)
    s[ex].compute_inline()
    bx, tx = s[Y].split(Y.op.axis[0], factor=16)
    s[Y].bind(bx, te.thread_axis("blockIdx.x"))
    s[Y].bind(tx, te.thread_axis("threadIdx.x"))
    s[mx].compute_at(s[Y], tx)
    s[sm].compute_at(s[Y], tx)
    return s, [X, Y]


def test_softmax_opencl_runs():
    s, args = softmax()
    x = np.random.default_rng(2).standard_normal((37, 19)).astype("float32") * 4
    _, y = run_opencl(s, args, [x, np.zeros_like(x)], name="softmax")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_softmax_intermediates_are_local():
    text = build(*softmax(), "opencl", "softmax").imported_modules[0].get_source()
    assert "float mx[1];" in text and "float sm[1];" in text and "__local" not in text


def test_softmax_cuda_compiles_to_ptx():
    assert ".visible .entry softmax_kernel(" in ptx_of(*softmax(), name="softmax")
