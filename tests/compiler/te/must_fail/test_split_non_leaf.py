import pytest

from compiler.ir.errors import ScheduleError


def test_split_of_an_axis_already_split(ew):
    A, B, s = ew
    i = B.op.axis[0]
    s[B].split(i, factor=2)
    with pytest.raises(ScheduleError, match=r"split on stage 'B': axis 'i' is not a leaf"):
        s[B].split(i, factor=2)
