"""TVM's tutorial "Reduction" (tutorials/language/reduction.py), its code kept with `import tvm`
replaced (`tvm.lower`/`tvm.build` are `lower`/`build`, `tvm.tir` is `tir`, `tvm.nd` is
`runtime.nd`). The cross-thread reduction on CUDA becomes, for the host targets, the same
rfactor schedule run in parallel over the rows and vectorized over the factored axis."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te, tir


def _row_sum():
    n = te.var("n")
    m = te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return A, B


def _run_row_sum(s, A, B, target, nn=128):
    f = build(s, [A, B], target)
    dev = runtime.cpu(0)
    a = runtime.nd.array(np.random.uniform(size=(nn, nn)).astype(A.dtype), dev)
    b = runtime.nd.array(np.zeros(nn, dtype=B.dtype), dev)
    f(a, b)
    np.testing.assert_allclose(b.numpy(), np.sum(a.numpy(), axis=1), rtol=1e-4)


def test_schedule_the_reduction(target):
    A, B = _row_sum()
    s = te.create_schedule(B.op)
    text = str(lower(s, [A, B], simple_mode=True))
    assert "B[i] = 0.0" in text and "for k in range(m):" in text
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    xo, xi = s[B].split(B.op.axis[0], factor=32)
    loops = [ln.strip() for ln in str(lower(s, [A, B], simple_mode=True)).splitlines()
             if ln.strip().startswith("for")]
    assert loops == ["for i.outer in range((n + 31) // 32):", "for i.inner in range(32):",
                     "for k.outer in range((m + 15) // 16):", "for k.inner in range(16):"]
    _run_row_sum(s, A, B, target, nn=45)
    # binding the rows of B to GPU threads lowers (building needs a GPU target)
    s[B].bind(xo, te.thread_axis("blockIdx.x"))
    s[B].bind(xi, te.thread_axis("threadIdx.x"))
    text = str(lower(s, [A, B], simple_mode=True))
    assert "thread_binding blockIdx.x" in text and "thread_binding threadIdx.x" in text


def test_reduction_factoring(target):
    A, B = _row_sum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    text = str(lower(s, [A, B], simple_mode=True))
    assert "B.rf = allocate([n * 16]" in text and "for k.inner.v in range(16):" in text
    # B is now a sum over the first axis of B.rf
    body = s[B].op.body[0]
    assert isinstance(body, tir.Reduce) and [iv.name for iv in body.axis] == ["k.inner.v"]
    assert body.source[0].tensor == BF
    _run_row_sum(s, A, B, target, nn=53)


def test_parallel_over_the_factored_reduction(target):
    """The tutorial's cross-thread schedule on a CPU: rows split and run in parallel, B.rf
    computed at B's reduction axis, the factored axis vectorized."""
    A, B = _row_sum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    xo, xi = s[B].split(s[B].op.axis[0], factor=32)
    s[B].parallel(xo)
    s[BF].compute_at(s[B], xo)
    s[BF].reorder(BF.op.axis[1], BF.op.reduce_axis[0], BF.op.axis[0])
    s[BF].vectorize(BF.op.axis[0])
    text = str(lower(s, [A, B], simple_mode=True))
    assert "# parallel" in text and "B.rf = allocate([" in text
    _run_row_sum(s, A, B, target)


def test_factored_axis_computed_at_reduce_axis(target):
    A, B = _row_sum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    xo, xi = s[B].split(s[B].op.axis[0], factor=32)
    s[BF].compute_at(s[B], s[B].op.reduce_axis[0])
    _run_row_sum(s, A, B, target, nn=77)


def test_convolution_via_2d_reduction(target):
    n = te.var("n")
    Input = te.placeholder((n, n), name="Input")
    Filter = te.placeholder((3, 3), name="Filter")
    di = te.reduce_axis((0, 3), name="di")
    dj = te.reduce_axis((0, 3), name="dj")
    Output = te.compute(
        (n - 2, n - 2),
        lambda i, j: te.sum(Input[i + di, j + dj] * Filter[di, dj], axis=[di, dj]),
        name="Output",
    )
    s = te.create_schedule(Output.op)
    text = str(lower(s, [Input, Filter, Output], simple_mode=True))
    assert "for di in range(3):" in text and "for dj in range(3):" in text
    f = build(s, [Input, Filter, Output], target)
    rng = np.random.default_rng(0)
    x, w = rng.random((9, 9), dtype="float32"), rng.random((3, 3), dtype="float32")
    y = runtime.nd.array(np.zeros((7, 7), "float32"))
    f(runtime.nd.array(x), runtime.nd.array(w), y)
    ref = np.array([[np.sum(x[i:i + 3, j:j + 3] * w) for j in range(7)] for i in range(7)])
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5)


def test_general_commutative_reduction(target):
    n = te.var("n")
    m = te.var("m")
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, dtype=t),
                              name="product")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    f = build(s, [A, B], target)
    a = np.random.default_rng(1).uniform(0.5, 1.5, size=(4, 6)).astype("float32")
    b = runtime.nd.array(np.zeros(4, "float32"))
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), np.prod(a, axis=1), rtol=1e-5)
