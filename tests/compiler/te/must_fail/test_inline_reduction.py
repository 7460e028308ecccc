import pytest

from compiler import te
from compiler.ir.errors import ScheduleError


def test_compute_inline_of_a_reduction():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), "k")
    R = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="R")
    B = te.compute((4,), lambda i: R[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match=r"compute_inline on stage 'R': cannot inline a "
                                            "reduction"):
        s[R].compute_inline()
