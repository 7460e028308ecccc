"""Programs that must fail: tensorize whose intrinsic does not match the scheduled loops, and
double_buffer / storage_align used where they cannot apply."""
import pytest

from compiler import lower, te, tir
from compiler.ir.errors import ScheduleError


def _gemv(m, l, op=lambda x, y: x * y, dtype="float32"):
    a = te.placeholder((l,), dtype=dtype, name="a")
    b = te.placeholder((m, l), dtype=dtype, name="b")
    k = te.reduce_axis((0, l), name="k")
    c = te.compute((m,), lambda i: te.sum(op(a[k], b[i, k]), axis=k), name="c")
    bb = tir.decl_buffer(b.shape, dtype, name="B", offset_factor=1, strides=[te.var("s"), 1])
    return te.decl_tensor_intrin(
        c.op, lambda ins, outs: tir.call_extern("int32", "g", outs[0].access_ptr("w")),
        name="gemv", binds={b: bb}, default_buffer_params={"offset_factor": 1})


def _matmul():
    A = te.placeholder((8, 16), name="A")
    B = te.placeholder((8, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    return A, B, C, te.create_schedule(C.op)


def test_intrinsic_computing_something_else():
    A, B, C, s = _matmul()
    s[C].tensorize(C.op.axis[1], _gemv(8, 16, op=lambda x, y: x - y))
    with pytest.raises(ScheduleError, match="stage 'C' with 'gemv': the stage computes"):
        lower(s, [A, B, C])


def test_intrinsic_of_another_dtype():
    A, B, C, s = _matmul()
    s[C].tensorize(C.op.axis[1], _gemv(8, 16, dtype="float16"))
    with pytest.raises(ScheduleError, match="the stage computes float32, the intrinsic float16"):
        lower(s, [A, B, C])


def test_stage_computed_inside_the_tensorized_loops():
    A, B, C, s = _matmul()
    BB = s.cache_read(B, "local", [C])
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    s[BB].compute_at(s[C], k)
    s[C].tensorize(j, _gemv(8, 16))
    with pytest.raises(ScheduleError, match="computed at loop 'k', which tensorize replaces"):
        lower(s, [A, B, C])


def test_double_buffer_of_an_inlined_stage():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    s[B].double_buffer()
    with pytest.raises(ScheduleError, match="double_buffer on stage 'B': it is inlined"):
        lower(s, [A, C])
