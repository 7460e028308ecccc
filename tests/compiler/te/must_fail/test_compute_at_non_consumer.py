import pytest

from compiler import lower, te
from compiler.ir.errors import ScheduleError


def test_compute_at_into_a_stage_that_does_not_read_it():
    A = te.placeholder((8,), name="A")
    T = te.compute((8,), lambda i: A[i] * 2.0, name="T")
    U = te.compute((8,), lambda i: A[i] + 1.0, name="U")
    B = te.compute((8,), lambda i: T[i] + U[i], name="B")
    s = te.create_schedule(B.op)
    s[T].compute_at(s[U], U.op.axis[0])  # as in TVM, the attachment is checked when lowering
    with pytest.raises(ScheduleError, match=r"stage 'U' does not consume 'T'.*axis 'i'"):
        lower(s, [A, B])


def test_compute_at_itself_or_in_a_cycle():
    A = te.compute((4, 4), lambda i, j: 1.0, name="A")
    C = te.compute((4, 4), lambda i, j: A[i, j] + 2.0, name="C")
    s = te.create_schedule(C.op)
    s[C].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ScheduleError, match="a stage cannot be computed at itself"):
        lower(s, [C])
    s = te.create_schedule(C.op)
    s[A].compute_at(s[C], C.op.axis[0])
    s[C].compute_at(s[A], A.op.axis[0])
    with pytest.raises(ScheduleError, match="stage 'A' does not consume 'C'"):
        lower(s, [C])


def _pipeline():
    """P -> M -> C: C reads P only through M."""
    A = te.placeholder((8,), name="A")
    P = te.compute((8,), lambda i: A[i] * 2.0, name="P")
    M = te.compute((8,), lambda i: P[i] + 1.0, name="M")
    C = te.compute((8,), lambda i: M[i] * 3.0, name="C")
    return A, P, M, C, te.create_schedule(C.op)


def test_producer_at_a_loop_its_consumer_runs_outside_of():
    A, P, M, C, s = _pipeline()
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[P].compute_at(s[C], xo)  # M stays at the root: it would read P outside C's loop
    with pytest.raises(ScheduleError, match=r"compute_at on stage 'P' at axis 'i.outer' of "
                                            r"stage 'C': its consumer 'M' is not computed "
                                            r"inside that loop"):
        lower(s, [A, C])


def test_producer_at_a_loop_inside_its_consumers_loop():
    A, P, M, C, s = _pipeline()
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[M].compute_at(s[C], xo)
    s[P].compute_at(s[C], xi)  # P recomputed per i.inner, but M reads it once per i.outer
    with pytest.raises(ScheduleError, match=r"stage 'P' at axis 'i.inner'.*consumer 'M' is "
                                            r"not computed inside that loop"):
        lower(s, [A, C])


def test_attach_axis_fused_as_the_outer_operand_after_compute_at():
    # split or fused as the inner operand, the attach point moves to the new loop; fused as the
    # outer operand it has no loop left
    A = te.placeholder((4, 8), name="A")
    M = te.compute((4, 8), lambda i, j: A[i, j] + 1.0, name="M")
    C = te.compute((4, 8), lambda i, j: M[i, j] * 3.0, name="C")
    s = te.create_schedule(C.op)
    s[M].compute_at(s[C], C.op.axis[0])
    s[C].fuse(*C.op.axis)
    with pytest.raises(ScheduleError, match=r"stage 'M' at axis 'i' of stage 'C': the axis was "
                                            r"fused after compute_at as the outer operand"):
        lower(s, [A, C])
