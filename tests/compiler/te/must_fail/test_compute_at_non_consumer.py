import pytest

from compiler import te
from compiler.errors import ScheduleError


def test_compute_at_into_a_stage_that_does_not_read_it():
    A = te.placeholder((8,), name="A")
    T = te.compute((8,), lambda i: A[i] * 2.0, name="T")
    U = te.compute((8,), lambda i: A[i] + 1.0, name="U")
    B = te.compute((8,), lambda i: T[i] + U[i], name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match=r"stage 'U' does not consume 'T'.*axis 'i'"):
        s[T].compute_at(s[U], U.op.axis[0])
