"""`build(lower(s, args))` with lower's default name "main", and PrimFuncs with Buffer params."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te
from compiler.tir import For, ForKind, PrimFunc, SizeVar, Var, const, decl_buffer
from compiler.tir import stmt as S


def test_build_of_default_lowered_name(target):
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    mod = lower(s, [A, B])
    assert "main" in mod
    f = build(mod, target=target)
    a = np.arange(9, dtype="float32")
    b = runtime.nd.empty((9,), B.dtype)
    f["main"](runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2)


def test_primfunc_with_buffer_params(target):
    n = SizeVar("n", "int32")
    A, B = decl_buffer((n,), "float32", "A"), decl_buffer((n,), "float32", "B")
    i = Var("i")
    body = For(i, const(0), n, ForKind.SERIAL, S.BufferStore(B, A[i] + 1.0, (i,)))
    func = PrimFunc([A, B], body)
    assert [p.dtype for p in func.params] == ["handle", "handle"]
    assert func.buffer_of(func.params[1]) is B
    f = build(func, target=target)
    a = np.arange(5, dtype="float32")
    b = runtime.nd.empty((5,), "float32")
    f["main"](runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a + 1)
