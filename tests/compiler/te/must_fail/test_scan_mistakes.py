"""Mistakes with te.scan and its schedule: each names the scan, the state or the stage."""
import pytest

from compiler import lower, te
from compiler.ir.errors import ScheduleError


def _parts(n=5):
    m = te.var("m")
    X = te.placeholder((m, n), name="X")
    state = te.placeholder((m, n), name="state")
    init = te.compute((1, n), lambda _, i: X[0, i], name="init")
    update = te.compute((m, n), lambda t, i: state[t - 1, i] + X[t, i], name="update")
    return m, X, state, init, update


def test_mismatched_lengths():
    m, X, state, init, update = _parts()
    with pytest.raises(ScheduleError, match=r"scan scan: init, update and state_placeholder "
                                            r"need one tensor per state, got 2, 1 and 1"):
        te.scan([init, init], update, state)


def test_update_shape_differs_from_state():
    m, X, state, init, _ = _parts()
    update = te.compute((m, 4), lambda t, i: state[t - 1, i], name="update")
    with pytest.raises(ScheduleError, match=r"state 0 \('state'\): update 'update' has shape "
                                            r"\['m', '4'\] but the state has \['m', '5'\]"):
        te.scan(init, update, state)


def test_init_shape_differs_from_state():
    m, X, state, _, update = _parts()
    init = te.compute((1, 3), lambda _, i: X[0, i], name="init")
    with pytest.raises(ScheduleError, match=r"init 'init' has shape \['1', '3'\]"):
        te.scan(init, update, state)


def test_dtype_differs():
    m, X, state, init, _ = _parts()
    update = te.compute((m, 5), lambda t, i: (state[t - 1, i] + X[t, i]).astype("float64"),
                        name="update")
    with pytest.raises(ScheduleError, match=r"update 'update' is float64 but the state is "
                                            r"float32"):
        te.scan(init, update, state)


def test_state_is_not_a_placeholder():
    m, X, state, init, update = _parts()
    with pytest.raises(ScheduleError, match=r"the state must be a te.placeholder"):
        te.scan(init, update, update)


def test_nothing_to_update():
    X = te.placeholder((3, 2), name="X")
    state = te.placeholder((3, 2), name="state")
    init = te.compute((3, 2), lambda t, i: X[t, i], name="init")
    update = te.compute((3, 2), lambda t, i: state[t - 1, i], name="update")
    with pytest.raises(ScheduleError, match=r"nothing is left to update"):
        te.scan(init, update, state)


def test_scan_stage_loops_are_fixed():
    m, X, state, init, update = _parts()
    res = te.scan(init, update, state)
    s = te.create_schedule(res.op)
    with pytest.raises(ScheduleError, match=r"split on stage 'scan': a scan's time loop is "
                                            r"fixed"):
        s[res].split(res.op.scan_axis, factor=2)
    with pytest.raises(ScheduleError, match=r"parallel on stage 'scan'"):
        s[res].parallel(res.op.scan_axis)


def test_update_cannot_move():
    m, X, state, init, update = _parts()
    res = te.scan(init, update, state)
    s = te.create_schedule(res.op)
    with pytest.raises(ScheduleError, match=r"compute_at on stage 'update': it is the update "
                                            r"of scan 'scan'"):
        s[update].compute_at(s[init], init.op.axis[0])
    with pytest.raises(ScheduleError, match=r"compute_inline on stage 'update'"):
        s[update].compute_inline()


def test_init_computed_in_the_time_loop():
    m, X, state, init, update = _parts()
    res = te.scan(init, update, state)
    s = te.create_schedule(res.op)
    s[init].compute_at(s[res], res.op.scan_axis)
    with pytest.raises(ScheduleError, match=r"stage 'init' is the init of scan 'scan'.*"
                                            r"compute_root it"):
        lower(s, [X, res])


def test_compute_at_a_spatial_axis_of_the_scan():
    m, X, state, init, update = _parts()
    res = te.scan(init, update, state)
    s = te.create_schedule(res.op)
    XX = s.cache_read(X, "local", [update])
    s[XX].compute_at(s[res], res.op.spatial_axis_[0])
    with pytest.raises(ScheduleError, match=r"axis 'scan.out0.i1' of scan 'scan' is not a loop"):
        lower(s, [X, res])
