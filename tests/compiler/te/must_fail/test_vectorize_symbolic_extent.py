import pytest

from compiler import lower, te
from compiler.ir.errors import ScheduleError


def test_vectorize_of_a_non_constant_extent():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(B.op.axis[0])
    with pytest.raises(ScheduleError, match=r"vectorize on stage 'B': axis 'i' has the "
                                            "non-constant extent n"):
        lower(s, [A, B])
