"""Schedule.cache_write after split/fuse/reorder (the cache takes the stage's loop order as its
layout, as TVM's) and for every output of a multi-output compute, built and run."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import ScheduleError, build, lower, te


def _call(f, arrays):
    nds = [runtime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def _mul():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A(i, j) * B(i, j), name="C")
    return A, B, C


def _check_mul(s, A, B, C, target, shape=(7, 5)):
    f = build(s, [A, B, C], target=target)
    rng = np.random.default_rng(0)
    a, b = rng.random(shape, dtype="float32"), rng.random(shape, dtype="float32")
    *_, c = _call(f, [a, b, np.zeros(shape, "float32")])
    np.testing.assert_allclose(c, a * b, rtol=1e-6)


def test_after_reorder(target):
    A, B, C = _mul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    s[C].reorder(j, i)
    CC = s.cache_write(C, "global")
    assert [str(d) for d in CC.shape] == ["n", "m"]  # the loop order, transposed
    assert [iv.name for iv in CC.op.axis] == ["j.c", "i.c"]
    assert s[C].leaf_iter_vars == list(C.op.axis) and not s[C].relations
    assert "C.global[i + j * m]" in str(lower(s, [A, B, C], simple_mode=True))
    _check_mul(s, A, B, C, target)


def test_after_split_reorder(target):
    A, B, C = _mul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    xo, xi = s[C].split(x, factor=4)
    s[C].reorder(xo, y, xi)
    CC = s.cache_write(C, "global")
    s = s.normalize()
    assert [iv.name for iv in CC.op.axis] == ["i.outer.c", "j.c", "i.inner.c"]
    assert str(CC.shape[2]) == "4"
    # 7 rows in blocks of 4: the cache's padding is not computed from A and B
    assert "select(" in str(lower(s, [A, B, C], simple_mode=True))
    _check_mul(s, A, B, C, target)


def test_after_fuse_and_split(target):
    A = te.placeholder((10, 6), name="A")
    C = te.compute((10, 6), lambda i, j: A[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[C].fuse(xi, C.op.axis[1])
    CC = s.cache_write(C, "local")
    assert [int(d) for d in CC.shape] == [3, 24]
    f = build(s, [A, C], target=target)
    a = np.random.default_rng(1).random((10, 6), dtype="float32")
    _, c = _call(f, [a, np.zeros((10, 6), "float32")])
    np.testing.assert_allclose(c, a * 2, rtol=1e-6)


def test_reduction_after_data_split(target):
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((m,), lambda i: te.sum(A(i, k) * B(i, k), axis=k), name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    CC = s.cache_write(C, "global")
    assert list(s[CC].op.reduce_axis) == [k]
    s = s.normalize()
    f = build(s, [A, B, C], target=target)
    rng = np.random.default_rng(2)
    a, b = rng.random((9, 5), dtype="float32"), rng.random((9, 5), dtype="float32")
    *_, c = _call(f, [a, b, np.zeros(9, "float32")])
    np.testing.assert_allclose(c, (a * b).sum(axis=1), rtol=1e-5)


def test_list_of_outputs(target):
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C1, C2 = te.compute(A.shape, lambda *i: (A(*i) + 1, B(*i) / 2), name="C")
    s = te.create_schedule([C1.op, C2.op])
    C1_cache, C2_cache = s.cache_write([C1, C2], "local")
    assert C1_cache.op is C2_cache.op and C2_cache.value_index == 1
    # the order of the list is the order of the result
    s2 = te.create_schedule([C1.op, C2.op])
    r2, r1 = s2.cache_write([C2, C1], "local")
    assert (r1.value_index, r2.value_index) == (0, 1)
    s = s.normalize()
    text = str(lower(s, [A, B, C1, C2], simple_mode=True))
    assert "C.local.v0 = allocate(" in text and "'local')" in text
    f = build(s, [A, B, C1, C2], target=target)
    rng = np.random.default_rng(3)
    a, b = rng.random((4, 3), dtype="float32"), rng.random((4, 3), dtype="float32")
    *_, c1, c2 = _call(f, [a, b, np.zeros((4, 3), "float32"), np.zeros((4, 3), "float32")])
    np.testing.assert_allclose(c1, a + 1, rtol=1e-6)
    np.testing.assert_allclose(c2, b / 2, rtol=1e-6)


def test_cache_then_compute_at_cache(target):
    """TVM's schedule: cache_write, then a cache_read computed at the cache's axis."""
    A, B, C = _mul()
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "local", readers=[C])
    CC = s.cache_write(C, "local")
    s[AA].compute_at(s[CC], CC.op.axis[0])
    _check_mul(s, A, B, C, target)


def test_mistakes():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((m,), lambda i: te.sum(A[i, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    s[C].split(k, factor=2)
    with pytest.raises(ScheduleError, match=r"cache_write on stage 'C': its reduction axis "
                                            r"was split or fused"):
        s.cache_write(C, "local")
    with pytest.raises(ScheduleError, match=r"'A' is a placeholder, not a te.compute"):
        s.cache_write(A, "local")
    D0, D1 = te.compute((m, n), lambda i, j: (A[i, j], A[i, j] * 2), name="D")
    E = te.compute((m, n), lambda i, j: A[i, j] + 1, name="E")
    s = te.create_schedule([D0.op, E.op])
    with pytest.raises(ScheduleError, match=r"stage 'D' has 2 outputs; list each of them"):
        s.cache_write([D0], "local")
    with pytest.raises(ScheduleError, match=r"come from different operations"):
        s.cache_write([D0, E], "local")
