"""compute_at of a producer into a stage that reads it only through other stages (P -> M -> C,
P and M both computed inside C's loops): P's region comes from M's region at that loop."""
import numpy as np

import compiler
import microruntime
from compiler import te


def _chain(n, m_of_p):
    A = te.placeholder((n,), name="A")
    P = te.compute((n,), lambda i: A[i] * 2.0, name="P")
    M = m_of_p(P)
    C = te.compute(M.shape, lambda i: M[i] * 3.0 - 1.0, name="C")
    return A, P, M, C


def _elementwise(P):
    return te.compute(P.shape, lambda i: P[i] + 1.0, name="M")


def _check(run, target, s, args, arrays, expected):
    """The interpreter and a build for `target` both give `expected`; returns the IR text."""
    interp = [a.copy() for a in arrays]
    text = run(s, args, interp)
    f = compiler.build(s, args, target=target, name="f")["f"]
    nds = [microruntime.nd.array(a) for a in arrays]
    f(*nds)
    np.testing.assert_allclose(interp[-1], expected, rtol=1e-6)
    np.testing.assert_allclose(nds[-1].numpy(), expected, rtol=1e-6)
    return text


def _lines(text):
    return [ln.strip() for ln in text.splitlines()]


def test_producer_and_middle_at_the_same_loop(run, target, rng):
    A, P, M, C = _chain(12, _elementwise)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[M].compute_at(s[C], xo)
    s[P].compute_at(s[C], xo)
    a = rng.random(12, dtype="float32")
    text = _check(run, target, s, [A, C], [a, np.zeros(12, "float32")], (a * 2 + 1) * 3 - 1)
    lines = _lines(text)
    at = lines.index("for i.outer in range(3):")
    assert lines[at + 1:at + 3] == ["P = allocate([4], float32, 'global')",
                                    "M = allocate([4], float32, 'global')"]
    assert lines.index("P[i] = A[i.outer * 4 + i] * 2.0") < lines.index("M[i_1] = P[i_1] + 1.0")


def test_producer_at_an_outer_loop_than_the_middle(run, target, rng):
    A, P, M, C = _chain(12, _elementwise)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[M].compute_at(s[C], xi)
    s[P].compute_at(s[C], xo)
    a = rng.random(12, dtype="float32")
    text = _check(run, target, s, [A, C], [a, np.zeros(12, "float32")], (a * 2 + 1) * 3 - 1)
    lines = _lines(text)
    outer, inner = lines.index("for i.outer in range(3):"), lines.index("for i.inner in range(4):")
    assert lines[outer + 1] == "P = allocate([4], float32, 'global')"
    assert lines[inner + 1] == "M = allocate([1], float32, 'global')"


def test_split_consumers_non_dividing_and_symbolic(run, target, rng):
    n = te.var("n")
    A, P, M, C = _chain(n, _elementwise)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=5)
    xio, xii = s[C].split(xi, factor=2)
    s[M].split(s[M].op.axis[0], factor=3)
    s[P].split(s[P].op.axis[0], nparts=2)
    s[M].compute_at(s[C], xio)
    s[P].compute_at(s[C], xo)
    for size in (1, 7, 13):
        a = rng.random(size, dtype="float32")
        _check(run, target, s, [A, C], [a, np.zeros(size, "float32")], (a * 2 + 1) * 3 - 1)


def test_stencil_middle_widens_the_producer_region(run, target, rng):
    def stencil(P):  # M[i] reads P at i - 1, i, i + 1 (centred one past M's index)
        return te.compute((10,), lambda i: P[i] + P[i + 1] * 2.0 + P[i + 2], name="M")

    A, P, M, C = _chain(12, stencil)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[M].compute_at(s[C], xi)
    s[P].compute_at(s[C], xo)
    a = rng.random(12, dtype="float32")
    p = a * 2
    expected = (p[:10] + p[1:11] * 2 + p[2:]) * 3 - 1
    text = _check(run, target, s, [A, C], [a, np.zeros(10, "float32")], expected)
    assert "P = allocate([6], float32, 'global')" in text


def test_producer_at_a_stage_two_consumers_away(run, target, rng):
    """P -> M -> X -> C: P at C's loop, M at X's loop, X at C's loop (inside P's)."""
    A = te.placeholder((8, 6), name="A")
    P = te.compute((8, 6), lambda i, j: A[i, j] + 1.0, name="P")
    M = te.compute((8, 6), lambda i, j: P[i, j] * 2.0, name="M")
    X = te.compute((8, 6), lambda i, j: M[i, 5 - j] - 1.0, name="X")
    C = te.compute((8, 6), lambda i, j: X[i, j] * X[i, j], name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=2)
    s[X].compute_at(s[C], ii)
    s[M].compute_at(s[X], s[X].op.axis[0])
    s[P].compute_at(s[C], io)
    a = rng.random((8, 6), dtype="float32")
    x = ((a + 1) * 2)[:, ::-1] - 1
    text = _check(run, target, s, [A, C], [a, np.zeros((8, 6), "float32")], x * x)
    assert "P = allocate([12], float32, 'global')" in text


def test_bound_through_a_fused_and_split_consumer_loop_is_exact():
    """B computed at the outer part of C's fused (i, j) split by 8, read at i * 14 + j: the
    region is the 8 flat positions of that part (the fused index rebuilt from i = f // 14 and
    j = f % 14 folds back to f), not the whole rows it touches."""
    A = te.placeholder((196,), name="A")
    B = te.compute((196,), lambda r: A[r] * 2.0, name="B")
    C = te.compute((14, 14), lambda i, j: B[i * 14 + j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    fo, _ = s[C].split(s[C].fuse(*C.op.axis), factor=8)
    s[B].compute_at(s[C], fo)
    bounds = te.schedule.InferBound(s)
    assert int(bounds[B.op.axis[0]].extent) == 8
    f = compiler.build(s, [A, C], "llvm")
    a = np.random.default_rng(0).random(196, dtype=np.float32)
    c = microruntime.nd.empty((14, 14), "float32")
    f(microruntime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), (a * 2 + 1).reshape(14, 14), rtol=1e-6)
