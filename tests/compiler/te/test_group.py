"""Schedule.create_group: TVM's group semantics (test_te_group) and groups computed at a
consumer's axis, lowered and run."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import ScheduleError, build, lower, te, tir


def _chain():
    m, n = te.size_var("m"), te.size_var("n")
    x = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    x1 = te.compute(x.shape, lambda *i: x(*i) + 1, name="x1")
    x2 = te.compute(x.shape, lambda *i: x1(*i) + 2, name="x2")
    return m, n, x, x1, x2


def _run(s, args, shapes, target="c"):
    f = build(s, args, target=target)
    nds = [runtime.nd.array(np.zeros(sh, "float32")) for sh in shapes]
    f(*nds)
    return [a.numpy() for a in nds]


def test_scan_group():
    m, n = te.size_var("m"), te.size_var("n")
    x = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: x[0, i])
    s_update1 = te.compute((m, n), lambda t, i: s_state[t - 1, i] + x[t, i])
    s_update2 = te.compute((m, n), lambda t, i: s_update1[t, i] + 1)
    s_update3 = te.compute((m, n), lambda t, i: s_update2[t, i] + 1)
    res = te.scan(s_init, s_update3, s_state, inputs=x)

    s = te.create_schedule(res.op)
    assert s[s_update1].group is not None
    assert s[s_update2].group == s[s_update1].group
    # assign within the group: valid
    s[s_update1].compute_at(s[s_update2], s_update2.op.axis[1])
    # a new group for s_update2 and s_update1, inside the scan's
    g2 = s.create_group(outputs=s_update2, inputs=[s_state, x])
    assert g2.group is not None
    assert g2.group == s[s_update3].group
    assert s[s_update2].group == g2
    assert s[s_update1].group == g2
    g2.compute_at(s[s_update3], s_update3.op.axis[1])
    assert g2.attach_stage == s[s_update3]
    with pytest.raises(ScheduleError, match=r"outside that group"):
        s[s_update2].compute_at(s[s_init], s_init.op.axis[0])
    (r,) = _run(s, [res], [(4, 3)])
    np.testing.assert_array_equal(r, np.array([[1], [4], [7], [10]]) * np.ones((1, 3)))


def test_compute_group(target):
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s[x1].group == g
    assert s[x].group == g
    g.compute_at(s[x2], x2.op.axis[1])
    assert g.attach_stage == s[x2]
    assert g.num_child_stages == 2
    text = str(lower(s, [x2], simple_mode=True))
    # both members computed for one element inside x2's inner loop
    assert "x = allocate([1]" in text and "x1 = allocate([1]" in text
    (r,) = _run(s, [x2], [(3, 5)], target)
    np.testing.assert_array_equal(r, np.full((3, 5), 4.0))


def test_nest_group():
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g1 = s.create_group(outputs=x1, inputs=x)
    g2 = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert set(s.groups) == {g1, g2}
    assert s[x].group == g2
    assert s[x1].group == g1
    assert g1.group == g2
    assert g2.num_child_stages == 2
    assert g1.num_child_stages == 1


def test_bound_group_schedule():
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    g.compute_at(s[x2], x2.op.axis[0])
    assert s[x1].group == g and s[x].group == g
    s = s.normalize()
    text = str(lower(s, [x2], simple_mode=True))
    assert "x = allocate([n]" in text and "x1 = allocate([n]" in text  # one row each
    (r,) = _run(s, [x2], [(2, 6)])
    np.testing.assert_array_equal(r, np.full((2, 6), 4.0))


def test_bound_nest_group(target):
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g1 = s.create_group(outputs=x, inputs=x, include_inputs=True)
    g2 = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s[x].group == g1
    assert s[x1].group == g2
    g2.compute_at(s[x2], x2.op.axis[0])
    g1.compute_at(s[x1], s[x1].op.axis[1])
    s = s.normalize()
    text = str(lower(s, [x2], simple_mode=True))
    assert "x = allocate([1]" in text and "x1 = allocate([n]" in text
    (r,) = _run(s, [x2], [(4, 3)], target)
    np.testing.assert_array_equal(r, np.full((4, 3), 4.0))


def test_member_scheduled_inside_group(target):
    """A member split and another member computed at its axis, the group at the consumer."""
    A = te.placeholder((6, 20), name="A")
    B = te.compute((6, 20), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((6, 20), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((6, 20), lambda i, j: C[i, j] - A[i, j], name="D")
    s = te.create_schedule(D.op)
    g = s.create_group(outputs=C, inputs=A)
    assert {st.name for st in g.members()} == {"B", "C"}
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[B].compute_at(s[C], jo)
    g.compute_at(s[D], D.op.axis[0])
    a = np.random.default_rng(0).random((6, 20), dtype="float32")
    f = build(s, [A, D], target=target)
    d = runtime.nd.empty((6, 20), "float32")
    f(runtime.nd.array(a), d)
    np.testing.assert_allclose(d.numpy(), a * 2 + 1 - a, rtol=1e-6)


def test_attachment_leaving_the_group_is_dropped():
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    s[x].compute_at(s[x2], x2.op.axis[0])
    s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s[x].attach_type == "root"


def test_group_mistakes():
    m, n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    with pytest.raises(ScheduleError, match=r"split on stage 'group\d+': a group has no loops"):
        g.split(x1.op.axis[0], factor=2)
    with pytest.raises(ScheduleError, match=r"belongs to this group"):
        g.compute_at(s[x1], x1.op.axis[0])
    with pytest.raises(ScheduleError, match=r"no stage lies between"):
        s.create_group(outputs=x, inputs=x1)
    y = te.compute(x.shape, lambda *i: x2(*i) * 3, name="y")
    s2 = te.create_schedule(y.op)
    s2.create_group(outputs=x1, inputs=x, include_inputs=True)
    with pytest.raises(ScheduleError, match=r"must contain whole groups"):
        s2.create_group(outputs=x2, inputs=x1, include_inputs=True)
    with pytest.raises(ScheduleError, match=r"outside that group"):
        s2[x1].compute_at(s2[y], y.op.axis[0])
