"""s[T].storage_align(axis, factor, offset): the allocation's stride at that axis padded so that
stride % factor == offset (TVM's test_schedule_storage_align / test_flatten_align), visible in
the lowered buffer, with results unchanged."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.ir.errors import ScheduleError
from compiler.te.storage import aligned_strides
from compiler.tir.functor import post_order_visit


def _allocs(mod):
    found = []
    post_order_visit(mod["main"].body,
                     lambda n: found.append(n) if isinstance(n, tir.Allocate) else None)
    return {a.buffer.name: a for a in found}


def _pipeline(m=8, n=16):
    A = te.placeholder((m, n), name="A")
    A1 = te.compute((m, n), lambda i, j: A[i, j], name="A1")
    A2 = te.compute((m, n), lambda i, j: A1[i, j] + 3, name="A2")
    return A, A1, A2


def test_strides_follow_tvms_rule():
    shape = [tir.const(8), tir.const(16)]
    assert [s.value for s in aligned_strides(shape, [(0, 2, 1)])] == [17, 1]
    assert [s.value for s in aligned_strides(shape, [(0, 16, 8)])] == [24, 1]
    assert [s.value for s in aligned_strides(shape, [(0, 4, 0)])] == [16, 1]
    three = [tir.const(2), tir.const(3), tir.const(5)]
    assert [s.value for s in aligned_strides(three, [(1, 4, 0), (0, 8, 3)])] == [27, 8, 1]


def test_flatten_align_in_the_lowered_ir():
    A, A1, A2 = _pipeline()
    s = te.create_schedule(A2.op)
    s[A1].storage_align(A1.op.axis[0], 2, 1)
    mod = lower(s, [A, A2])
    # rows of 16 elements at a stride of 17: the last row ends at 7 * 17 + 16
    assert _allocs(mod)["A1"].buffer.shape[0].value == 7 * 17 + 16
    text = str(mod)
    assert "A1[i * 17 + j]" in text and "A1[i_1 * 17 + j_1]" in text


@pytest.mark.parametrize("factor,offset", [(2, 1), (16, 8), (5, 3)])
def test_aligned_cache_stage_computes_the_same(target, factor, offset):
    m, n = 12, 10
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    AA = s.cache_read(A, "local", [B])
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[AA].compute_at(s[B], xo)
    s[AA].storage_align(AA.op.axis[0], factor, offset)
    mod = lower(s, [A, B])
    buf = _allocs(mod)["A.local"].buffer
    stride = n + (factor + offset - n % factor) % factor
    assert stride % factor == offset
    assert buf.shape[0].value == 3 * stride + n
    f = build(s, [A, B], target=target)
    a = np.random.rand(m, n).astype("float32")
    b = runtime.nd.empty((m, n), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_symbolic_shape(target):
    n = te.var("n")
    A = te.placeholder((n, n), name="A")
    A1 = te.compute((n, n), lambda i, j: A[i, j] + 1.0, name="A1")
    A2 = te.compute((n, n), lambda i, j: A1[j, i] * 2.0, name="A2")
    s = te.create_schedule(A2.op)
    s[A1].storage_align(A1.op.axis[0], 8, 1)
    assert "floormod" in str(lower(s, [A, A2])).lower() or "%" in str(lower(s, [A, A2]))
    f = build(s, [A, A2], target=target)
    for size in (3, 9):
        a = np.random.rand(size, size).astype("float32")
        c = runtime.nd.empty((size, size), "float32")
        f(runtime.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), (a.T + 1) * 2, rtol=1e-6)


def test_mistakes():
    A, A1, A2 = _pipeline()
    s = te.create_schedule(A2.op)
    with pytest.raises(ScheduleError, match="not a data axis"):
        s[A1].storage_align(A2.op.axis[0], 2, 1)
    with pytest.raises(ScheduleError, match="0 <= offset < factor"):
        s[A1].storage_align(A1.op.axis[0], 2, 2)
    with pytest.raises(ScheduleError, match="placeholder"):
        s[A].storage_align(A.op.axis[0] if A.op.axis else A1.op.axis[0], 2, 1)
    s[A2].storage_align(A2.op.axis[0], 4, 1)
    with pytest.raises(ScheduleError, match="argument of the function"):
        lower(s, [A, A2])
