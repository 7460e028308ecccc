"""te.extern: an opaque statement (here a packed call into Python) computing tensors that feed
and are fed by ordinary compute stages, lowered where its stage is realized."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, tir


@pytest.fixture
def py_funcs():
    """Python "matmul" and "split_sum" callbacks registered for the kernels; the calls made."""
    calls = []

    def matmul(a, b, c):
        calls.append(("matmul", tuple(a.shape), tuple(b.shape), tuple(c.shape)))
        c.copyfrom(a.numpy() @ b.numpy())

    def split_sum(a, lo, hi):  # two outputs: the first and second half of the rows, summed
        calls.append(("split_sum",))
        x = a.numpy()
        lo.copyfrom(x[: x.shape[0] // 2].sum(axis=0))
        hi.copyfrom(x[x.shape[0] // 2:].sum(axis=0))

    names = {"kiln_test.matmul": matmul, "kiln_test.split_sum": split_sum}
    for name, fn in names.items():
        microruntime.register_func(name, fn, override=True)
    yield calls
    for name in names:
        microruntime.remove_global_func(name)


def _matmul_then_scale(n, k, m):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    P = te.compute((n, k), lambda i, j: A[i, j] + 1.0, name="P")  # a compute stage feeds it
    C = te.extern((n, m), [P, B], lambda ins, outs: tir.call_packed(
        "kiln_test.matmul", ins[0], ins[1], outs[0]), name="C")
    D = te.compute((n, m), lambda i, j: C[i, j] * 2.0 + 1.0, name="D")  # ... and reads it
    return A, B, C, D


def _run(f, name, *arrays):
    nds = [microruntime.nd.array(a) for a in arrays]
    f[name](*nds)
    return nds


@pytest.mark.parametrize("sizes", [(5, 7, 3), (64, 32, 48)])
def test_extern_matmul_feeds_compute(target, py_funcs, sizes):
    n, k, m = sizes
    A, B, C, D = _matmul_then_scale(n, k, m)
    s = te.create_schedule(D.op)
    f = compiler.build(s, [A, B, D], target=target, name="mm")
    a = np.random.rand(n, k).astype("float32")
    b = np.random.rand(k, m).astype("float32")
    *_, d = _run(f, "mm", a, b, np.zeros((n, m), "float32"))
    np.testing.assert_allclose(d.numpy(), ((a + 1) @ b) * 2 + 1, rtol=1e-5)
    assert py_funcs == [("matmul", (n, k), (k, m), (n, m))]


def test_extern_with_symbolic_shape_and_output_argument(target, py_funcs):
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.placeholder((4, 4), name="B")
    C = te.extern((n, 4), [A, B], lambda ins, outs: tir.call_packed(
        "kiln_test.matmul", ins[0], ins[1], outs[0]), name="C")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [A, B, C], target=target, name="mm")
    for rows in (1, 6):
        a = np.random.rand(rows, 4).astype("float32")
        b = np.random.rand(4, 4).astype("float32")
        *_, c = _run(f, "mm", a, b, np.zeros((rows, 4), "float32"))
        np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5)
    assert [c[1] for c in py_funcs] == [(1, 4), (6, 4)]


def test_extern_with_two_outputs(target, py_funcs):
    A = te.placeholder((6, 3), name="A")
    lo, hi = te.extern([(3,), (3,)], [A], lambda ins, outs: tir.call_packed(
        "kiln_test.split_sum", ins[0], outs[0], outs[1]), name="S")
    D = te.compute((3,), lambda i: lo[i] - hi[i], name="D")
    s = te.create_schedule(D.op)
    f = compiler.build(s, [A, D], target=target, name="split")
    a = np.random.rand(6, 3).astype("float32")
    _, d = _run(f, "split", a, np.zeros(3, "float32"))
    np.testing.assert_allclose(d.numpy(), a[:3].sum(0) - a[3:].sum(0), rtol=1e-5, atol=1e-6)


def test_lowered_extern_sits_at_the_root_on_the_chosen_buffers():
    A, B, C, D = _matmul_then_scale(4, 4, 4)
    s = te.create_schedule(D.op)
    func = compiler.lower(s, [A, B, D], name="mm")["mm"]
    call = func.body.body.body.seq[1]  # Allocate P, Allocate C, (P loops, call, D loops)
    args = call.value.args
    assert call.value.op == "tir.call_packed" and args[0].value == "kiln_test.matmul"
    param_b = dict(func.buffer_map)[func.params[1]]
    assert args[2] is param_b  # the input bound to the argument buffer of B
    assert args[1].data is func.body.buffer.data  # ... and to the allocation of P
    assert args[3].data is func.body.body.buffer.data  # the output to the allocation of C


def test_extern_statement_body_and_default_dtype():
    A = te.placeholder((4,), dtype="int32", name="A")
    C = te.extern((4,), [A], lambda ins, outs: compiler.tir.Evaluate(
        tir.call_packed("kiln_test.f", ins[0], outs[0])), name="C")
    assert C.dtype == A.dtype and C.op.input_tensors == [A]
    assert isinstance(C.op, te.ExternOp) and C.op.body.value.args[1] is C.op.input_placeholders[0]
