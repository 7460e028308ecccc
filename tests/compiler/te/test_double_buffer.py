"""s[T].double_buffer(): the stage computed at a loop gets two halves used in turn (TVM's
InjectDoubleBuffer): the lowered IR has the doubled allocation lifted out of the loop, the
prologue writing iteration 0, the write of i + 1 ahead of the reads of i under
"double_buffer_write", and the last iteration without a write; results match numpy."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.ir.errors import ScheduleError
from compiler.ir.module import IRModule
from compiler.tir import pipeline
from compiler.tir.functor import post_order_visit
from compiler.tir.transform.inject_double_buffer import inject_double_buffer
from compiler.transform import PassContext


def _find(node, cls, pred=lambda n: True):
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, cls) and pred(n) else None)
    return found


def _row_sum(n=16, m=32):
    """B[i] = sum_k C[i, k] with C = A * 2 computed (double-buffered) at B's row loop."""
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    C = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="C")
    B = te.compute((n,), lambda i: te.sum(C[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    s[C].compute_at(s[B], B.op.axis[0])
    s[C].double_buffer()
    return s, A, B


def test_lowered_ir_has_the_doubled_buffer_and_the_prefetch():
    s, A, B = _row_sum()
    body = lower(s, [A, B])["main"].body
    # the allocation is lifted out of the row loop and doubled
    assert isinstance(body, tir.Allocate) and body.buffer.shape[0].value == 2 * 32
    prologue, loop, tail = body.body.seq[:2] + (body.body.seq[2:],)
    assert isinstance(prologue, tir.For) and isinstance(loop, tir.For)
    assert loop.extent.value == 15  # the last iteration is peeled: no write ahead there
    writes = _find(loop, tir.AttrStmt, lambda a: a.key == "double_buffer_write")
    assert len(writes) == 1 and writes[0].node is body.buffer.data
    assert not _find(body, tir.AttrStmt, lambda a: a.key == "double_buffer_scope")
    assert not _find(tail[0] if len(tail) == 1 else tir.seq(*tail), tir.AttrStmt,
                     lambda a: a.key == "double_buffer_write")
    text = str(lower(s, [A, B]))
    assert "(i + 1) % 2 * 32" in text and "i % 2 * 32" in text


def test_double_buffered_results(target):
    s, A, B = _row_sum()
    f = build(s, [A, B], target=target)
    a = np.random.rand(16, 32).astype("float32")
    b = runtime.nd.empty((16,), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), (a * 2).sum(axis=1), rtol=1e-5)


def test_cache_read_at_the_reduction_loop(target):
    """The GPU-style pattern: a cache of A's tile per k-outer iteration, double-buffered."""
    n, m, l = 8, 12, 32
    A = te.placeholder((n, l), name="A")
    W = te.placeholder((m, l), name="W")
    k = te.reduce_axis((0, l), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * W[j, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "local", [C])
    ko, ki = s[C].split(k, factor=8)
    i, j = C.op.axis
    s[C].reorder(i, ko, j, ki)
    s[AA].compute_at(s[C], ko)
    s[AA].double_buffer()
    mod = lower(s, [A, W, C])
    assert _find(mod["main"].body, tir.AttrStmt, lambda a: a.key == "double_buffer_write")
    f = build(s, [A, W, C], target=target)
    a = np.random.rand(n, l).astype("float32")
    w = np.random.rand(m, l).astype("float32")
    c = runtime.nd.empty((n, m), "float32")
    f(runtime.nd.array(a), runtime.nd.array(w), c)
    np.testing.assert_allclose(c.numpy(), a @ w.T, rtol=1e-5)


def test_symbolic_extent_guards_empty_loops(target):
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    C = te.compute((n, 4), lambda i, j: A[i, j] + 1.0, name="C")
    D = te.compute((n, 4), lambda i, j: C[i, 3 - j] * 3.0, name="D")
    s = te.create_schedule(D.op)
    s[C].compute_at(s[D], D.op.axis[0])
    s[C].double_buffer()
    body = lower(s, [A, D])["main"].body
    assert isinstance(body.body, tir.IfThenElse)  # n may be 0
    f = build(s, [A, D], target=target)
    for rows in (0, 1, 2, 7):
        a = np.random.rand(rows, 4).astype("float32")
        d = runtime.nd.empty((rows, 4), "float32")
        f(runtime.nd.array(a), d)
        np.testing.assert_allclose(d.numpy(), (a[:, ::-1] + 1) * 3, rtol=1e-6)


def test_disabled_pass_keeps_one_buffer(target):
    s, A, B = _row_sum()
    with PassContext(disabled_pass=["tir.InjectDoubleBuffer"]):
        mod = lower(s, [A, B])
        f = build(s, [A, B], target=target)
    assert not _find(mod["main"].body, tir.AttrStmt, lambda a: a.key == "double_buffer_write")
    a = np.random.rand(16, 32).astype("float32")
    b = runtime.nd.empty((16,), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), (a * 2).sum(axis=1), rtol=1e-5)


def test_ir_builder_scope_as_tvms_pass_test():
    """TVM's test_double_buffer (without the GPU thread): the attr written by hand."""
    n, m = 10, 4
    ib = tir.ir_builder.create()
    A = ib.pointer("float32", name="A")
    C = ib.pointer("float32", name="C")
    with ib.for_range(0, n) as i:
        B = ib.allocate("float32", m, name="B")
        with ib.new_scope():
            ib.scope_attr(B.asobject().data, "double_buffer_scope", 1)
            with ib.for_range(0, m) as j:
                B[j] = A[i * 4 + j]
        with ib.for_range(0, m) as j:
            C[j] = B[j] + 1.0
    func = tir.PrimFunc([A.asobject().data, C.asobject().data], ib.get())
    mod = pipeline.run_passes(IRModule({"db": func}), [pipeline.storage_flatten,
                                                        inject_double_buffer])
    body = mod["db"].body
    assert isinstance(body, tir.Allocate) and body.buffer.shape[0].value == m * 2
    assert inject_double_buffer(mod) is mod  # nothing left to do


def test_mistakes():
    s, A, B = _row_sum()
    s[s.stage_map[B.op.input_tensors[0].op].op].compute_root()
    with pytest.raises(ScheduleError, match="computed at the root"):
        lower(s, [A, B])
    s, A, B = _row_sum()
    s[B].parallel(B.op.axis[0])
    with pytest.raises(ScheduleError, match="is parallel; its iterations must run in order"):
        lower(s, [A, B])
    with pytest.raises(ScheduleError, match="placeholder"):
        s[A].double_buffer()
