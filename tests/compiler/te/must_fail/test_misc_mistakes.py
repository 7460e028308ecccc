import pytest

from compiler import lower, te
from compiler.ir.errors import ScheduleError


def test_parallel_data_axis_fused_with_a_reduce_axis():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), "k")
    R = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="R")
    s = te.create_schedule(R.op)
    fused = s[R].fuse(R.op.axis[0], k)  # a reduction axis now
    with pytest.raises(ScheduleError, match=r"parallel on stage 'R'.*reduction axis"):
        s[R].parallel(fused)


def test_parallel_reduce_axis():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), "k")
    R = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="R")
    s = te.create_schedule(R.op)
    with pytest.raises(ScheduleError, match=r"parallel on stage 'R'.*'k'"):
        s[R].parallel(k)


def test_placeholder_missing_from_args(ew):
    A, B, s = ew
    with pytest.raises(ScheduleError, match=r"placeholder 'A' is read but is not in"):
        lower(s, [B])


def test_cache_write_after_reduce_split():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), "k")
    R = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="R")
    s = te.create_schedule(R.op)
    s[R].split(k, factor=2)
    with pytest.raises(ScheduleError, match=r"cache_write on stage 'R': its reduction axis was "
                                            r"split or fused \(leaf 'k.outer'\)"):
        s.cache_write(R, "local")


def test_reorder_duplicate_axis(ew):
    A, B, s = ew
    i, _ = B.op.axis
    with pytest.raises(ScheduleError, match=r"reorder on stage 'B': an axis is given twice"):
        s[B].reorder(i, i)


def test_split_needs_factor(ew):
    A, B, s = ew
    with pytest.raises(ScheduleError, match=r"split on stage 'B': give exactly one of"):
        s[B].split(B.op.axis[0])


def test_inline_an_output_argument():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].compute_inline()
    with pytest.raises(ScheduleError, match=r"compute_inline on stage 'B': it is an output"):
        lower(s, [A, B])
