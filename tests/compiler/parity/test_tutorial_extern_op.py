"""TVM's tutorial "External Tensor Functions" (extern_op.py) with `import tvm` replaced by Kiln's
packages. CBLAS is not part of Kiln, so "tvm.contrib.cblas.matmul" is registered here as a
Python function (numpy) under that name, which is what the tutorial's packed call finds; the
Python callback of the tutorial (my_tvm_addone) as written; and, as in the tutorial's summary,
an extern stage whose body is written with the ir_builder."""
import numpy as np

import compiler as tvm_compiler
import microruntime as tvm
from compiler import te, tir


def _numpy_matmul(a, b, c, transa, transb):
    x, y = a.numpy(), b.numpy()
    c.copyfrom((x.T if transa else x) @ (y.T if transb else y))


def test_extern_packed_call_then_bias(target, registered):
    registered("tvm.contrib.cblas.matmul", _numpy_matmul)
    n = 64
    l = 32
    m = 35
    bias = te.var("bias", dtype="float32")
    A = te.placeholder((n, l), name="A")
    B = te.placeholder((l, m), name="B")
    C = te.extern(
        (n, m),
        [A, B],
        lambda ins, outs: tir.call_packed(
            "tvm.contrib.cblas.matmul", ins[0], ins[1], outs[0], False, False
        ),
        name="C",
    )
    D = te.compute(C.shape, lambda i, j: C[i, j] + bias, name="D")
    s = te.create_schedule(D.op)

    dev = tvm.cpu(0)
    f = tvm_compiler.build(s, [A, B, D, bias], target)
    a = tvm.nd.array(np.random.uniform(size=(n, l)).astype(A.dtype), dev)
    b = tvm.nd.array(np.random.uniform(size=(l, m)).astype(B.dtype), dev)
    d = tvm.nd.array(np.zeros((n, m), dtype=D.dtype), dev)
    bb = 10.0
    f(a, b, d, bb)
    np.testing.assert_allclose(d.numpy(), np.dot(a.numpy(), b.numpy()) + 10, rtol=1e-5)


def test_python_function_as_extern(target, registered):
    calls = []

    def my_tvm_addone(x, y):
        calls.append((type(x).__name__, type(y).__name__))
        tvm.nd.array(x.numpy() + 1).copyto(y)

    registered("tvm.contrib.my_tvm_addone", my_tvm_addone)
    n = 1024
    dev = tvm.cpu(0)
    A = te.placeholder((n,), name="A")
    B = te.extern(
        A.shape,
        [A],
        lambda ins, outs: tir.call_packed("tvm.contrib.my_tvm_addone", ins[0], outs[0]),
        name="C",
    )
    s = te.create_schedule(B.op)
    f = tvm_compiler.build(s, [A, B], target)
    a = tvm.nd.array(np.random.uniform(size=(n,)).astype(A.dtype), dev)
    b = tvm.nd.array(np.random.uniform(size=(n,)).astype(B.dtype), dev)
    f(a, b)
    np.testing.assert_allclose(b.numpy(), a.numpy() + 1, rtol=1e-5)
    assert len(calls) == 1


def test_ir_builder_extern_between_compute_stages(target):
    n = 100
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")

    def reverse_cumsum(ins, outs):
        ib = tir.ir_builder.create()
        x, y = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        y[n - 1] = x[n - 1]
        with ib.for_range(0, n - 1, name="i") as i:
            y[n - 2 - i] = y[n - 1 - i] + x[n - 2 - i]
        return ib.get()

    C = te.extern(B.shape, [B], reverse_cumsum, name="C")
    D = te.compute((n,), lambda i: C[i] - 1.0, name="D")
    s = te.create_schedule(D.op)
    f = tvm_compiler.build(s, [A, D], target)
    a = np.random.uniform(size=n).astype("float32")
    d = tvm.nd.empty((n,), "float32")
    f(tvm.nd.array(a), d)
    np.testing.assert_allclose(d.numpy(), np.cumsum((a * 2)[::-1])[::-1] - 1, rtol=1e-5)
