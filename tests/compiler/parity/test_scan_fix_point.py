"""ScanGetBody and ScanFixPointAnalysis (TVM's te.schedule graph functions): which operations
form a scan's body, and for which spatial axes an element depends only on the same element of
the state at earlier steps."""
import pytest

from compiler import te
from compiler.ir.errors import ScheduleError


def _state(m=8, n=6):
    x = te.compute((m, n, n), lambda *i: te.const(1.0, "float32"), name="x")
    state = te.placeholder((m, n, n), name="state")
    init = te.compute((1, n, n), lambda _, i, j: x[0, i, j], name="init")
    return x, state, init


def _fix(scan):
    fx = te.schedule.ScanFixPointAnalysis(scan.op)
    return [fx[a].value for a in scan.op.spatial_axis_]


def test_body_is_what_lies_between_the_state_and_the_update():
    x, state, init = _state()
    up1 = te.compute(state.shape, lambda t, i, j: state[t - 1, i, j] + 1, name="up1")
    xt = te.compute(state.shape, lambda t, i, j: x[t, i, j] * 2, name="xt")
    update = te.compute(state.shape, lambda t, i, j: up1[t, i, j] + xt[t, i, j],
                        name="update")
    scan = te.scan(init, update, state)
    body = te.schedule.ScanGetBody(scan.op)
    assert body == [up1.op, update.op]  # producers first; xt does not read the state
    with pytest.raises(ScheduleError, match="takes a scan"):
        te.schedule.ScanGetBody(update.op)


def test_same_element_reads_are_fixed_points():
    x, state, init = _state()
    update = te.compute(state.shape, lambda t, i, j: x[t, j, i] + state[t - 1, i, j],
                        name="update")
    assert _fix(te.scan(init, update, state)) == [1, 1]


def test_transposed_state_read_is_not():
    x, state, init = _state()
    update = te.compute(state.shape, lambda t, i, j: x[t, i, j] + state[t - 1, j, i],
                        name="update")
    assert _fix(te.scan(init, update, state)) == [0, 0]


def test_a_constant_index_breaks_only_its_axis():
    x, state, init = _state()
    h1 = te.compute(state.shape, lambda t, j, i: state[t - 1, i, j], name="h1")
    h2 = te.compute(state.shape, lambda t, i, j: state[t - 1, i, 3] * 2, name="h2")
    update = te.compute(state.shape, lambda t, i, j: h1[t, j, i] + h2[t, i, j],
                        name="update")
    assert _fix(te.scan(init, update, state)) == [1, 0]


def test_two_axes_meeting_in_one_dimension_both_fail():
    x, state, init = _state()
    h1 = te.compute(state.shape, lambda t, j, i: state[t - 1, j, j], name="h1")
    h2 = te.compute(state.shape, lambda t, i, j: state[t - 1, i, j] * 2, name="h2")
    update = te.compute(state.shape, lambda t, i, j: h1[t, j, i] + h2[t, i, j],
                        name="update")
    assert _fix(te.scan(init, update, state)) == [0, 0]


def test_each_state_of_a_multi_output_scan():
    m, n = 8, 5
    x1, s1 = te.placeholder((m, n), name="x1"), te.placeholder((m, n), name="s1")
    x2, s2 = te.placeholder((m, n), name="x2"), te.placeholder((m, n), name="s2")
    i1 = te.compute((1, n), lambda _, i: x1[0, i], name="i1")
    i2 = te.compute((1, n), lambda _, i: x2[0, i], name="i2")
    u1 = te.compute((m, n), lambda t, i: s1[t - 1, i] + x1[t, i], name="u1")
    u2 = te.compute((m, n), lambda t, i: x2[t, i] + s2[t - 1, (i + 1) % n], name="u2")
    r0, r1 = te.scan([i1, i2], [u1, u2], [s1, s2])
    assert [te.schedule.ScanFixPointAnalysis(r0.op)[a].value
            for a in r0.op.spatial_axis_] == [1, 0]
