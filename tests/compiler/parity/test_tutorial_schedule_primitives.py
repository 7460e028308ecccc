"""TVM's tutorial "Schedule Primitives in TVM" (schedule_primitives.py) with `import tvm`
replaced by Kiln's packages: each schedule lowered (its loop structure checked in the printed IR)
and, beyond the tutorial, built and run against numpy (bind only lowers: it is a GPU schedule)."""
import numpy as np
import pytest

import compiler as tvm_compiler
import microruntime as tvm
from compiler import te

n = te.var("n")
m = te.var("m")


def _run(target, s, args, inputs, expected):
    f = tvm_compiler.build(s, args, target=target)
    arrays = [tvm.nd.array(x) for x in inputs]
    out = tvm.nd.empty(expected.shape, "float32")
    f(*arrays, out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def _lower(s, args):
    return str(tvm_compiler.lower(s, args, simple_mode=True))


def test_elementwise_multiply(target):
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
    s = te.create_schedule([C.op])
    assert "for i in range(m)" in _lower(s, [A, B, C])
    a, b = np.random.rand(5, 7).astype("float32"), np.random.rand(5, 7).astype("float32")
    _run(target, s, [A, B, C], [a, b], a * b)


def test_split(target):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 2, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=32)
    text = _lower(s, [A, B])
    assert "i.outer in range((m + 31) // 32)" in text and "i.inner in range(32)" in text
    a = np.random.rand(70).astype("float32")
    _run(target, s, [A, B], [a], a * 2)

    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i], name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], nparts=32)
    assert "i.outer in range(32)" in _lower(s, [A, B])
    _run(target, s, [A, B], [a], a)


@pytest.mark.parametrize("step", ["tile", "fuse", "reorder"])
def test_tile_fuse_reorder(target, step):
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j], name="B")
    s = te.create_schedule(B.op)
    xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], x_factor=10, y_factor=5)
    if step == "fuse":
        assert s[B].fuse(xi, yi).var.name == "i.inner.j.inner.fused"
        assert "i.inner.j.inner.fused in range(50)" in _lower(s, [A, B])
    elif step == "reorder":
        s[B].reorder(xi, yo, xo, yi)
        text = _lower(s, [A, B])
        assert text.index("i.inner") < text.index("j.outer") < text.index("i.outer in")
    else:
        text = _lower(s, [A, B])
        assert text.index("i.outer") < text.index("j.outer") < text.index("i.inner") \
            < text.index("j.inner")
    a = np.random.rand(23, 12).astype("float32")
    _run(target, s, [A, B], [a], a)


def test_bind_lowers_to_thread_loops():
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: A[i] * 2, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    text = _lower(s, [A, B])
    assert "blockIdx.x" in text and "threadIdx.x" in text


@pytest.mark.parametrize("how", ["root", "compute_at", "compute_inline", "compute_root"])
def test_compute_at_inline_root(target, how):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1, name="B")
    C = te.compute((m,), lambda i: B[i] * 2, name="C")
    s = te.create_schedule(C.op)
    if how in ("compute_at", "compute_root"):
        s[B].compute_at(s[C], C.op.axis[0])
    if how == "compute_root":
        s[B].compute_root()
    if how == "compute_inline":
        s[B].compute_inline()
    text = _lower(s, [A, B, C])
    loops = text.count("for ")
    assert loops == {"root": 2, "compute_at": 1, "compute_inline": 1, "compute_root": 2}[how]
    a = np.random.rand(9).astype("float32")
    f = tvm_compiler.build(s, [A, B, C], target=target)
    b, c = tvm.nd.empty((9,), "float32"), tvm.nd.empty((9,), "float32")
    f(tvm.nd.array(a), b, c)
    np.testing.assert_allclose(c.numpy(), (a + 1) * 2, rtol=1e-6)
    if how != "compute_inline":  # an inlined argument is left unwritten, as TVM
        np.testing.assert_allclose(b.numpy(), a + 1, rtol=1e-6)
