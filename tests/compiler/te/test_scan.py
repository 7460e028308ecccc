"""te.scan: a recurrence over the first dimension, its schedule (the body group computed at the
time loop) and its lowering, checked against numpy recurrences."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import ScheduleError, build, lower, te, tir


def _cumsum():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state, inputs=[X])
    return X, s_state, s_init, s_update, s_scan


def _call(f, arrays):
    nds = [runtime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def test_scan_op_fields():
    X, s_state, s_init, s_update, s_scan = _cumsum()
    op = s_scan.op
    assert isinstance(op, te.ScanOp) and op.output(0) == s_scan
    assert op.scan_axis.name == "scan.idx" and op.scan_axis.kind == "ordered"
    assert int(op.scan_axis.dom.min) == 1
    assert str(op.scan_axis.dom.extent) == str(X.shape[0] - 1)
    assert tuple(s_scan.shape) == tuple(s_state.shape) and s_scan.dtype == s_update.dtype
    assert op.init == [s_init] and op.update == [s_update] and op.state_placeholder == [s_state]
    assert op.inputs == [X] and op.input_tensors == [s_init, s_update]
    assert [iv.name for iv in op.spatial_axis_] == ["scan.out0.i1"]


def test_cumsum(target):
    X, _, s_init, s_update, s_scan = _cumsum()
    s = te.create_schedule(s_scan.op)
    xo, xi = s[s_init].split(s_init.op.axis[1], factor=4)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=4)
    s[s_update].vectorize(xi)
    text = str(lower(s, [X, s_scan], simple_mode=True))
    assert "for scan.idx in range(m - 1):" in text
    # the update writes row idx + 1 from row idx of the same buffer
    assert "scan[" in text and "n * (scan.idx + 1)" in text and "n * scan.idx" in text
    f = build(s, [X, s_scan], target=target, name="myscan")
    a = np.random.default_rng(0).random((10, 13), dtype="float32")
    _, b = _call(f, [a, np.zeros((10, 13), "float32")])
    np.testing.assert_allclose(b, np.cumsum(a, axis=0), rtol=1e-5)


def test_multi_stage_scan_cell(target):
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s1 = te.compute((m, n), lambda t, i: s_state[t - 1, i] * 2, name="s1")
    s2 = te.compute((m, n), lambda t, i: s1[t, i] + X[t, i], name="s2")
    s_scan = te.scan(s_init, s2, s_state, inputs=[X])
    s = te.create_schedule(s_scan.op)
    assert s[s1].group is not None and s[s1].group is s[s2].group
    xo, xi = s[s2].split(s2.op.axis[1], factor=32)
    s[s1].compute_at(s[s2], xo)
    text = str(lower(s, [X, s_scan], simple_mode=True))
    assert "s1 = allocate([32]" in text  # one row, one block of 32, per step
    f = build(s, [X, s_scan], target=target)
    a = np.random.default_rng(1).random((6, 40), dtype="float32")
    _, b = _call(f, [a, np.zeros_like(a)])
    ref = a.copy()
    for t in range(1, 6):
        ref[t] = ref[t - 1] * 2 + a[t]
    np.testing.assert_allclose(b, ref, rtol=1e-5)


def test_multiple_states(target):
    m, n, l_ = te.var("m"), te.var("n"), te.var("l")
    X = te.placeholder((m, n), name="X")
    s_state1, s_state2 = te.placeholder((m, n)), te.placeholder((m, l_))
    s_init1 = te.compute((1, n), lambda _, i: X[0, i])
    s_init2 = te.compute((1, l_), lambda _, i: 0.0)
    s_update1 = te.compute((m, n), lambda t, i: s_state1[t - 1, i] + X[t, i])
    s_update2 = te.compute((m, l_), lambda t, i: s_state2[t - 1, i] + s_state1[t - 1, 0])
    s_scan1, s_scan2 = te.scan([s_init1, s_init2], [s_update1, s_update2],
                               [s_state1, s_state2], inputs=[X])
    assert s_scan1.op is s_scan2.op and s_scan2.value_index == 1
    s = te.create_schedule(s_scan1.op)
    f = build(s, [X, s_scan1, s_scan2], target=target)
    a = np.random.default_rng(2).random((5, 3), dtype="float32")
    _, b1, b2 = _call(f, [a, np.zeros((5, 3), "float32"), np.zeros((5, 4), "float32")])
    r1 = np.cumsum(a, axis=0)
    r2 = np.zeros((5, 4), "float32")
    for t in range(1, 5):
        r2[t] = r2[t - 1] + r1[t - 1, 0]
    np.testing.assert_allclose(b1, r1, rtol=1e-5)
    np.testing.assert_allclose(b2, r2, rtol=1e-5)


def test_two_step_init_and_consumer(target):
    """A Fibonacci-like recurrence over 2 initial steps, read by a later stage."""
    m = 9
    state = te.placeholder((m, 3), name="state")
    init = te.compute((2, 3), lambda t, i: tir.const(1.0) + i, name="init")
    update = te.compute((m, 3), lambda t, i: state[t - 1, i] + state[t - 2, i], name="update")
    fib = te.scan(init, update, state, name="fib")
    out = te.compute((m, 3), lambda t, i: fib[t, i] * 2.0, name="out")
    s = te.create_schedule(out.op)
    text = str(lower(s, [out], simple_mode=True))
    assert "for fib.idx in range(7):" in text
    f = build(s, [out], target=target)
    (o,) = _call(f, [np.zeros((m, 3), "float32")])
    ref = np.zeros((m, 3), "float32")
    ref[0] = ref[1] = np.arange(3) + 1
    for t in range(2, m):
        ref[t] = ref[t - 1] + ref[t - 2]
    np.testing.assert_allclose(o, ref * 2, rtol=1e-6)


def test_cache_of_state_at_scan_axis(target):
    """The LSTM pattern: a cache of the state (and of an input) computed at the scan axis."""
    X, s_state, s_init, s_update, s_scan = _cumsum()
    s = te.create_schedule(s_scan.op)
    sS = s.cache_read(s_state, "local", [s_update])
    xL = s.cache_read(X, "local", [s_update])
    s[sS].compute_at(s[s_scan], s_scan.op.scan_axis)
    s[xL].compute_at(s[s_scan], s_scan.op.scan_axis)
    text = str(lower(s, [X, s_scan], simple_mode=True))
    loop = text.index("for scan.idx")
    assert text.index("X.local = allocate([n]") > loop  # one row per step
    f = build(s, [X, s_scan], target=target)
    a = np.random.default_rng(3).random((7, 5), dtype="float32")
    _, b = _call(f, [a, np.zeros_like(a)])
    np.testing.assert_allclose(b, np.cumsum(a, axis=0), rtol=1e-5)


def test_bound_scan_cache_read_in_body():
    """TVM's test_bound_scan: a cache of a computed input, at the update's split axis."""
    m, n = te.var("m"), te.var("n")
    X = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state)
    assert tuple(s_scan.shape) == (m, n)
    s = te.create_schedule(s_scan.op)
    XX = s.cache_read(X, "local", s_update)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=4)
    s[XX].compute_at(s[s_update], xo)
    s = s.normalize()
    text = str(lower(s, [s_scan], simple_mode=True))
    assert "x.local = allocate([4]" in text
    f = build(s, [s_scan], target="c")
    (b,) = _call(f, [np.zeros((5, 6), "float32")])
    np.testing.assert_allclose(b, np.cumsum(np.ones((5, 6), "float32"), axis=0))


@pytest.mark.parametrize("inline", [["x1"], ["xx", "x1", "x2"]])
def test_scan_inline(inline):
    """TVM's test_scan_inline1/2: stages of the body inlined."""
    m, n = te.var("m"), te.var("n")
    x = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    s_state1, s_state2 = te.placeholder((m, n)), te.placeholder((m, n))
    s_init1 = te.compute((1, n), lambda _, i: x[0, i])
    s_init2 = te.compute((1, n), lambda _, i: x[0, i])
    xx = te.compute((m, n), lambda t, i: s_state1[t - 1, i] + x[t, i], name="xx")
    x1 = te.compute((m, n), lambda t, i: xx[t, i] + 1, name="x1")
    x2 = te.compute((m, n), lambda t, i: xx[t, i] + s_state2[t - 1, 2], name="x2")
    u1 = te.compute((m, n), lambda t, i: x1[t, i], "u1")
    u2 = te.compute((m, n), lambda t, i: x2[t, i], "u2")
    res1, res2 = te.scan([s_init1, s_init2], [u1, u2], [s_state1, s_state2])
    s = te.create_schedule(res1.op)
    for t in {"xx": xx, "x1": x1, "x2": x2}.values():
        if t.op.name in inline:
            s[t].compute_inline()
    f = build(s, [x, res1, res2], target="c")
    _, r1, r2 = _call(f, [np.zeros((4, 3), "float32")] * 3)
    e1, e2 = np.zeros((4, 3)), np.zeros((4, 3))
    e1[0] = e2[0] = 1
    for t in range(1, 4):
        e1[t] = e1[t - 1] + 1 + 1
        e2[t] = e1[t - 1] + 1 + e2[t - 1, 2]
    np.testing.assert_allclose(r1, e1)
    np.testing.assert_allclose(r2, e2)


def test_lower_with_state_as_argument():
    """TVM's test_schedule_scan lowers with the state placeholder as the only argument: the
    scan's output is then a buffer of the function."""
    X, s_state, s_init, s_update, s_scan = _cumsum()
    s = te.create_schedule(s_scan.op).normalize()
    text = str(lower(s, [X, s_state], simple_mode=True))
    assert "scan = allocate(" in text and "for scan.idx in range(m - 1):" in text


def test_schedule_left_unchanged_by_lowering():
    X, _, _, s_update, s_scan = _cumsum()
    s = te.create_schedule(s_scan.op)
    lower(s, [X, s_scan])
    assert s[s_update].attach_type == "scan_update" and s[s_update].attach_stage is s[s_scan]
    assert s[s_update].group.attach_type == "scan_update"


def test_reads_state_outside_the_time_loop():
    X, s_state, _, s_update, s_scan = _cumsum()
    s = te.create_schedule(s_scan.op)
    sS = s.cache_read(s_state, "local", [s_update])
    with pytest.raises(ScheduleError, match=r"'placeholder.local'.*outside the scan's time loop"
                                            r".*compute_at\(s\[scan\], scan.op.scan_axis\)"):
        lower(s, [X, s_scan])
    s[sS].compute_at(s[s_scan], s_scan.op.scan_axis)
    lower(s, [X, s_scan])


def test_updates_from_one_multi_output_compute(target):
    m, n = 6, 3
    X = te.placeholder((m, n), name="X")
    st1, st2 = te.placeholder((m, n), name="st1"), te.placeholder((m, n), name="st2")
    i1, i2 = te.compute((1, n), lambda _, i: (X[0, i], X[0, i] * 0), name="init")
    u1, u2 = te.compute((m, n), lambda t, i: (st1[t - 1, i] + X[t, i],
                                              st2[t - 1, i] + st1[t - 1, i]), name="upd")
    r1, r2 = te.scan([i1, i2], [u1, u2], [st1, st2], inputs=[X])
    s = te.create_schedule(r1.op)
    f = build(s, [X, r1, r2], target=target)
    a = np.random.default_rng(4).random((m, n), dtype="float32")
    _, o1, o2 = _call(f, [a, np.zeros((m, n), "float32"), np.zeros((m, n), "float32")])
    e1, e2 = np.cumsum(a, axis=0), np.zeros_like(a)
    for t in range(1, m):
        e2[t] = e2[t - 1] + e1[t - 1]
    np.testing.assert_allclose(o1, e1, rtol=1e-5)
    np.testing.assert_allclose(o2, e2, rtol=1e-5)
