import pytest

from compiler.ir.errors import ScheduleError


def test_fuse_of_non_adjacent_axes(ew):
    A, B, s = ew
    i, j = B.op.axis
    jo, ji = s[B].split(j, factor=2)
    with pytest.raises(ScheduleError, match=r"fuse on stage 'B': axes 'i' and 'j.inner' are "
                                            "not adjacent"):
        s[B].fuse(i, ji)
