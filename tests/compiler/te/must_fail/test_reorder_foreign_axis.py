import pytest

from compiler import te
from compiler.ir.errors import ScheduleError


def test_reorder_with_an_axis_of_another_stage(ew):
    A, B, s = ew
    C = te.compute((8,), lambda x: A[x, 0], name="C")
    with pytest.raises(ScheduleError, match=r"reorder on stage 'B': axis 'x' does not belong"):
        s[B].reorder(C.op.axis[0], B.op.axis[0])
