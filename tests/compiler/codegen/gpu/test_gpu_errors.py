"""GPU schedules that must fail, each with the error type and a phrase of its message."""
import pytest

import compiler
from compiler import ScheduleError, te


def _scale(n=64):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    return A, B, te.create_schedule(B.op)


@pytest.mark.parametrize("target,limit", [("opencl", 256), ("cuda", 1024)])
def test_thread_extent_over_the_target_limit(target, limit):
    A, B, s = _scale(4096)
    bx, tx = s[B].split(B.op.axis[0], factor=2048)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    with pytest.raises(ScheduleError, match=rf"2048 threads per block.*more than the {limit}.*"
                                            r"max_num_threads"):
        compiler.build(s, [A, B], target=target, target_host="c", name="scale")


def test_max_num_threads_option_is_the_limit():
    A, B, s = _scale(64)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    with pytest.raises(ScheduleError, match="more than the 32"):
        compiler.build(s, [A, B], target="opencl -max_num_threads=32", target_host="c")


def test_unbound_loop_in_a_gpu_build():
    A, B, s = _scale()
    with pytest.raises(ScheduleError, match=r"buffer\(s\) 'A', 'B' are accessed by host code.*"
                                            r"Did you forget to bind\?"):
        compiler.build(s, [A, B], target="opencl", target_host="c", name="scale")


def test_stage_left_unbound_next_to_a_bound_one():
    A = te.placeholder((64,), name="A")
    T = te.compute((64,), lambda i: A[i] + 1.0, name="T")
    B = te.compute((64,), lambda i: T[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=32)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    with pytest.raises(ScheduleError, match="'T'.*forget to bind"):
        compiler.build(s, [A, B], target="cuda", target_host="c", name="two")


def test_unknown_thread_tag():
    A, B, s = _scale()
    with pytest.raises(ScheduleError, match=r"unknown thread tag 'threadIdx.w'; use one of "
                                            r"blockIdx.x"):
        s[B].bind(B.op.axis[0], te.thread_axis("threadIdx.w"))
