"""te.extern bodies written with tir.ir_builder, as in TVM's test_codegen_extern.py,
test_te_tensor.py and TOPI's hand-written scans: the stage feeds and is fed by compute stages,
built on both host targets, run and compared with numpy."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te, tir


def _run(f, *arrays):
    nds = [runtime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def test_add_pipeline(target):
    nn = 64
    n = tir.convert(nn)
    A = te.placeholder((n,), name="A")

    def extern_generator(ins, outs):
        """Manually write the IR for the extern function, add pipeline."""
        ib = tir.ir_builder.create()
        a, c = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        with ib.for_range(0, (n + 1) // 2) as i:
            with ib.for_range(0, 2, kind="vectorize") as v:
                c[i * 2 + v] = a[i * 2 + v] + 1.0
        return ib.get()

    C = te.extern(A.shape, [A], extern_generator, name="C")
    s = te.create_schedule(C.op)
    assert "C[" in str(lower(s, [A, C], simple_mode=True))
    f = build(s, [A, C], target)
    a = np.random.uniform(size=nn).astype(A.dtype)
    _, c = _run(f, a, np.zeros(nn, dtype=C.dtype))
    np.testing.assert_allclose(c, a + 1)


def _cumsum_ir(data, out):
    """TOPI's CPU scan: rows in parallel, a running sum along each row."""
    ib = tir.ir_builder.create()
    rows, cols = data.shape
    d, o = ib.buffer_ptr(data), ib.buffer_ptr(out)
    with ib.for_range(0, rows, kind="parallel", name="r") as r:
        o[r, 0] = d[r, 0]
        with ib.for_range(1, cols, name="k") as k:
            o[r, k] = o[r, k - 1] + d[r, k]
    return ib.get()


def test_scan_with_symbolic_shape_between_compute_stages(target):
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    S = te.extern(B.shape, [B], lambda ins, outs: _cumsum_ir(ins[0], outs[0]), name="S")
    D = te.compute((m, n), lambda i, j: S[i, j] + 1.0, name="D")
    s = te.create_schedule(D.op)
    f = build(s, [A, D], target=target, name="scan")
    for shape in [(1, 1), (3, 7), (16, 5)]:
        a = np.random.rand(*shape).astype("float32")
        _, d = _run(f, a, np.zeros(shape, "float32"))
        np.testing.assert_allclose(d, np.cumsum(2 * a, axis=1) + 1, rtol=1e-5)


def test_extern_multi_out(target):
    m = 8
    A = te.placeholder((m, 5), name="A")
    B = te.compute((m, 5), lambda i, j: A[i, j] * 10, name="B")

    def extern_func(ins, outs):
        ib = tir.ir_builder.create()
        b = ib.buffer_ptr(ins[1])
        lo, hi = ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[1])
        with ib.for_range(0, m, name="i") as i:
            lo[i] = b[i, 0]
            hi[i] = b[i, 0]
            with ib.for_range(1, 5, name="j") as j:
                with ib.if_scope(b[i, j] < lo[i]):
                    lo[i] = b[i, j]
                with ib.if_scope(b[i, j] > hi[i]):
                    hi[i] = b[i, j]
        return ib.get()

    res = te.extern([(m,), (m,)], [A, B], extern_func, name="minmax")
    assert len(res) == 2 and res[1].value_index == 1
    R = te.compute((m,), lambda i: res[1][i] - res[0][i], name="R")
    s = te.create_schedule(R.op)
    f = build(s, [A, R], target=target)
    a = np.random.rand(m, 5).astype("float32")
    _, r = _run(f, a, np.zeros(m, "float32"))
    np.testing.assert_allclose(r, 10 * (a.max(axis=1) - a.min(axis=1)), rtol=1e-5)


def test_ir_builder_body_calls_a_python_function(target, registered):
    """The extern_op tutorial's Python hook, called from an ir_builder body that then
    post-processes its result in place."""
    n = 10
    calls = []

    def my_addone(x, y):
        calls.append(tuple(x.shape))
        y.copyfrom(x.numpy() + 1)

    registered("kiln_test.my_addone", my_addone)
    A = te.placeholder((n,), name="A")

    def body(ins, outs):
        ib = tir.ir_builder.create()
        ib.emit(tir.call_packed("kiln_test.my_addone", ins[0], outs[0]))
        c = ib.buffer_ptr(outs[0])
        with ib.for_range(0, n, name="i") as i:
            c[i] = c[i] * 2.0
        return ib.get()

    C = te.extern(A.shape, [A], body, name="C")
    s = te.create_schedule(C.op)
    f = build(s, [A, C], target=target)
    a = np.random.rand(n).astype("float32")
    _, c = _run(f, a, np.zeros(n, "float32"))
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
    assert calls == [(n,)]
