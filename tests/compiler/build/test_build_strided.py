"""Buffers bound with symbolic strides accept strided (non-compact) tensors, zero-copy."""
import numpy as np

import compiler
import microruntime
from compiler import te
from compiler.tir import decl_buffer


def test_symbolic_strides_take_a_strided_view(target):
    n, m, row = te.var("n"), te.var("m"), te.var("row")
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    a_buf = decl_buffer((n, m), "float32", name="A", strides=[row, 1])
    f = compiler.build(s, [A, B], target=target, name="scale", binds={A: a_buf})["scale"]

    base = np.arange(6 * 10, dtype="float32").reshape(6, 10)
    view = base[1:5, 2:9]  # rows 10 elements apart, 7 columns
    b = microruntime.nd.empty((4, 7), "float32")
    f(microruntime.nd.from_dlpack(view), b)
    np.testing.assert_allclose(b.numpy(), view * 2.0 + 1.0)
