"""Schedule.rfactor: the factored stage's shape and axes (TVM's test_rfactor), built results
against numpy, factor_axis, tuple reducers and where= conditions."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import ScheduleError, build, lower, te, tir


def _call(f, arrays):
    nds = [runtime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def _sum2():
    n = te.size_var("n")
    k1 = te.reduce_axis((0, n), name="k1")
    k2 = te.reduce_axis((0, n), name="k2")
    A = te.placeholder((n, n, n), name="A")
    B = te.compute((n,), lambda i: te.sum(A[i, k1, k2], axis=[k1, k2]), name="B")
    return n, k1, k2, A, B


def test_rfactor_unsplit_axis(target):
    n, k1, k2, A, B = _sum2()
    s = te.create_schedule(B.op)
    BF = s.rfactor(B, k1)
    assert tuple(BF.shape) == (n, n) and BF.op.name == "B.rf"
    assert set(BF.op.body[0].axis) == {k2}
    assert s[B].op.body[0].axis[0].dom.extent is n
    assert len(s[B].all_iter_vars) == 2
    assert [iv.name for iv in s[B].all_iter_vars] == ["ax0", "k1.v"]
    f = build(s, [A, B], target=target)
    a = np.random.default_rng(0).random((5, 5, 5), dtype="float32")
    _, b = _call(f, [a, np.zeros(5, "float32")])
    np.testing.assert_allclose(b, a.sum(axis=(1, 2)), rtol=1e-5)


@pytest.mark.parametrize("factor_axis", [0, 1, -1])
def test_rfactor_split_axis(target, factor_axis):
    n, k1, k2, A, B = _sum2()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k1, factor=4)
    xo, xi = s[B].split(B.op.axis[0], factor=8)
    BF = s.rfactor(B, ki, factor_axis)
    pos = 0 if factor_axis == 0 else 1
    assert BF.shape[pos].value == 4 and BF.shape[1 - pos] is n
    assert BF.op.body[0].axis[0] is k2
    assert BF.op.body[0].axis[1].var is ko.var
    assert s[B].op.body[0].axis[0].dom.extent.value == 4
    # 7 is not a multiple of 4: BF's reduction is guarded
    text = str(lower(s, [A, B], simple_mode=True))
    assert "k1.outer * 4 + k1.inner < n" in text
    f = build(s, [A, B], target=target)
    a = np.random.default_rng(1).random((7, 7, 7), dtype="float32")
    _, b = _call(f, [a, np.zeros(7, "float32")])
    np.testing.assert_allclose(b, a.sum(axis=(1, 2)), rtol=1e-5)


def test_rfactor_outer_part_parallel_vectorize(target):
    """Factor the outer part, compute BF in parallel and vectorize its factored axis."""
    n, m = 24, 64
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, nparts=8)
    BF = s.rfactor(B, ko, factor_axis=1)
    assert [int(d) for d in BF.shape] == [n, 8]
    s[BF].parallel(BF.op.axis[0])
    s[BF].reorder(BF.op.axis[0], BF.op.reduce_axis[0], BF.op.axis[1])
    s[BF].vectorize(BF.op.axis[1])
    text = str(lower(s, [A, B], simple_mode=True))
    assert "# parallel" in text and "B.rf[ramp(i * 8, 1, 8)] = max(" in text
    f = build(s, [A, B], target=target)
    a = np.random.default_rng(2).standard_normal((n, m)).astype("float32")
    _, b = _call(f, [a, np.zeros(n, "float32")])
    np.testing.assert_array_equal(b, a.max(axis=1))


def test_rfactor_computed_at_reduce_axis(target):
    n, m = 50, 37
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    xo, xi = s[B].split(s[B].op.axis[0], factor=32)
    s[B].parallel(xo)
    s[BF].compute_at(s[B], s[B].op.reduce_axis[0])
    text = str(lower(s, [A, B], simple_mode=True))
    assert "B.rf = allocate([1]" in text
    f = build(s, [A, B], target=target)
    a = np.random.default_rng(3).random((n, m), dtype="float32")
    _, b = _call(f, [a, np.zeros(n, "float32")])
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def _argmax():
    def fcombine(x, y):
        return tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1])

    def fidentity(t0, t1):
        return tir.const(-1, t0), te.min_value(t1)

    return te.comm_reducer(fcombine, fidentity, name="argmax")


def test_rfactor_tuple_reducer(target):
    argmax = _argmax()
    m, n = 6, 40
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="float32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")
    s = te.create_schedule(T0.op)
    ko, ki = s[T0].split(k, factor=8)
    TF = s.rfactor(T1, ki)
    assert isinstance(TF, list) and len(TF) == 2
    assert TF[0].dtype == "int32" and TF[1].dtype == "float32"
    f = build(s, [idx, val, T0, T1], target=target)
    iv = np.tile(np.arange(n, dtype="int32"), (m, 1))
    vv = np.random.default_rng(4).permutation(m * n).reshape(m, n).astype("float32")
    *_, t0, t1 = _call(f, [iv, vv, np.zeros(m, "int32"), np.zeros(m, "float32")])
    np.testing.assert_array_equal(t1, vv.max(axis=1))
    np.testing.assert_array_equal(t0, vv.argmax(axis=1))


def test_rfactor_keeps_where(target):
    n = 12
    A = te.placeholder((n, n), name="A")
    k = te.reduce_axis((0, n), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k, where=k <= i), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=5)
    BF = s.rfactor(B, ki)
    # the where= condition, on the factored indices, and the guard of the split's padding
    assert str(BF.op.body[0].condition) == "k.outer * 5 + k.inner <= i and " \
        "k.outer * 5 + k.inner < 12"
    f = build(s, [A, B], target=target)
    a = np.random.default_rng(5).random((n, n), dtype="float32")
    _, b = _call(f, [a, np.zeros(n, "float32")])
    np.testing.assert_allclose(b, np.tril(a).sum(axis=1), rtol=1e-5)


def test_bound_rfactor_nparts():
    """TVM's test_bound_rfactor: BF's factored axis has the nparts extent."""
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n))
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=(i > 1)), name="B")
    s = te.create_schedule(B.op)
    kf, ki = s[B].split(k, nparts=4)
    BF = s.rfactor(B, kf)
    s = s.normalize()
    assert [str(d) for d in BF.shape] == ["4", "1"]
    f = build(s, [A, B], target="c")
    _, b = _call(f, [np.ones(9, "float32"), np.full(1, 7, "float32")])
    np.testing.assert_array_equal(b, [0.0])  # where=(i > 1) never holds for i = 0


def test_rfactor_mistakes():
    n, k1, k2, A, B = _sum2()
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match=r"rfactor of 'B': axis 'i' is a data axis"):
        s.rfactor(B, B.op.axis[0])
    ko, ki = s[B].split(k1, factor=4)
    with pytest.raises(ScheduleError, match=r"axis 'k1' is not a leaf axis any more"):
        s.rfactor(B, k1)
    with pytest.raises(ScheduleError, match=r"factor_axis=3 is out of range"):
        s.rfactor(B, ki, 3)
    C = te.compute((n,), lambda i: A[i, 0, 0] + 1, name="C")
    sc = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match=r"stage 'C' is not a reduction"):
        sc.rfactor(C, C.op.axis[0])
    k = te.reduce_axis((2, 9), "k")
    D = te.compute((n,), lambda i: te.sum(A[i, 0, k], axis=k), name="D")
    sd = te.create_schedule(D.op)
    with pytest.raises(ScheduleError, match=r"axis 'k' ranges over \[2, .*starting at 0"):
        sd.rfactor(D, k)
    with pytest.raises(ScheduleError, match=r"axis 'k1' is not an axis of stage 'D'"):
        sd.rfactor(D, k1)


# ---- where= on every reducer ----------------------------------------------------------------
@pytest.mark.parametrize("name, ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_where_every_reducer(target, name, ref):
    n = 9
    A = te.placeholder((n, n), name="A")
    k = te.reduce_axis((0, n), "k")
    R = te.compute((n,), lambda i: getattr(te, name)(A[i, k], axis=k, where=k >= i), name="R")
    s = te.create_schedule(R.op)
    text = str(lower(s, [A, R], simple_mode=True))
    assert "if i <= k:" in text or "if k >= i:" in text  # the predicate guards the update
    f = build(s, [A, R], target=target)
    a = np.random.default_rng(6).standard_normal((n, n)).astype("float32")
    _, r = _call(f, [a, np.zeros(n, "float32")])
    expect = [ref(a[i, i:]) for i in range(n)]
    np.testing.assert_allclose(r, expect, rtol=1e-5)


def test_where_positional_and_tuple_reducer(target):
    argmax = _argmax()
    m, n = 5, 11
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="float32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), k, k % 2 == 0), name="T")
    assert str(T0.op.body[0].condition) == str(T0.op.body[1].condition)
    s = te.create_schedule(T0.op)
    f = build(s, [idx, val, T0, T1], target=target)
    iv = np.tile(np.arange(n, dtype="int32"), (m, 1))
    vv = np.random.default_rng(7).permutation(m * n).reshape(m, n).astype("float32")
    *_, t0, t1 = _call(f, [iv, vv, np.zeros(m, "int32"), np.zeros(m, "float32")])
    even = vv[:, ::2]
    np.testing.assert_array_equal(t1, even.max(axis=1))
    np.testing.assert_array_equal(t0, even.argmax(axis=1) * 2)
