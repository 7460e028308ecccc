"""Schedule.normalize(): a copy whose root loops are rebased to start at 0, as TVM's; the schedule
it came from is unchanged, and both lower to the same loops."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te


def _sum_from_two():
    """B[i] = sum of A[i, k] for k in [2, 10): a loop whose axis does not start at 0."""
    A = te.placeholder((4, 12), name="A")
    k = te.reduce_axis((2, 10), name="k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return A, B, k


def test_returns_a_rebased_copy():
    A = te.placeholder((8, 6), name="A")
    B = te.compute((8, 6), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    sn = s.normalize()
    assert sn is not s and sn[B] is not s[B] and sn[B].op is B.op
    assert s[B].leaf_iter_vars == list(B.op.axis)  # the original is untouched
    leaves = sn[B].leaf_iter_vars
    assert [iv.name for iv in leaves] == ["i", "j"]
    assert all(new is not old for new, old in zip(leaves, B.op.axis))


def test_loops_at_zero_lower_the_same(target):
    A = te.placeholder((8, 6), name="A")
    B = te.compute((8, 6), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[B].reorder(xi, xo)
    sn = s.normalize()
    assert str(lower(sn, [A, B])) == str(lower(s, [A, B]))
    f = build(sn, [A, B], target=target, name="f")
    a = np.arange(48, dtype="float32").reshape(8, 6)
    b = runtime.nd.empty((8, 6), "float32")
    f["f"](runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


def test_axis_not_starting_at_zero(target):
    A, B, k = _sum_from_two()
    s = te.create_schedule(B.op)
    assert int(k.dom.min) == 2
    sn = s.normalize()
    rebased = sn[B].leaf_iter_vars[1]
    assert rebased is not k and rebased.name == "k" and rebased.kind == k.kind
    text = str(lower(sn, [A, B]))
    assert "for k in range(8)" in text and "k + 2" in text
    assert text == str(lower(s, [A, B]))
    f = build(sn, [A, B], target=target, name="f")
    a = np.random.default_rng(0).random((4, 12)).astype("float32")
    b = runtime.nd.empty((4,), "float32")
    f["f"](runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a[:, 2:10].sum(axis=1), rtol=1e-5)


def test_attachments_follow_the_rebased_axis(target):
    A = te.placeholder((6, 5), name="A")
    B = te.compute((6, 5), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((6, 5), lambda i, j: B[i, j] * 3.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    sn = s.normalize()
    assert sn[B].attach_stage is sn[C]
    assert sn[B].attach_ivar is sn[C].leaf_iter_vars[0]
    assert s[B].attach_ivar is C.op.axis[0] and s[B].attach_stage is s[C]
    f = build(sn, [A, C], target=target, name="f")
    a = np.arange(30, dtype="float32").reshape(6, 5)
    c = runtime.nd.empty((6, 5), "float32")
    f["f"](runtime.nd.array(a), c)
    np.testing.assert_array_equal(c.numpy(), (a + 1) * 3)


def test_annotations_move_and_bound_axes_stay():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((64, 4), lambda i, j: A[i] * 2.0, name="C")
    s = te.create_schedule([B.op, C.op])
    s[B].bind(B.op.axis[0], te.thread_axis("threadIdx.x"))
    s[C].parallel(C.op.axis[0])
    sn = s.normalize()
    assert sn[B].leaf_iter_vars == [B.op.axis[0]]
    new = sn[C].leaf_iter_vars[0]
    assert new is not C.op.axis[0]
    assert sn[C].iter_attrs[new].kind == s[C].iter_attrs[C.op.axis[0]].kind
    assert "parallel" in str(lower(sn, [A, C]))


def test_normalized_schedule_can_be_scheduled_further(target):
    A, B, _ = _sum_from_two()
    sn = te.create_schedule(B.op).normalize()
    i, k = sn[B].leaf_iter_vars
    ko, ki = sn[B].split(k, factor=3)
    sn[B].reorder(ko, i, ki)
    f = build(sn, [A, B], target=target, name="f")
    a = np.random.default_rng(1).random((4, 12)).astype("float32")
    b = runtime.nd.empty((4,), "float32")
    f["f"](runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a[:, 2:10].sum(axis=1), rtol=1e-5)
