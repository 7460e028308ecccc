"""build() end to end: te schedule -> C/LLVM -> loaded module, checked against numpy."""
import numpy as np
import pytest
from sample_kernels import vector_add

import compiler
import microruntime
from compiler.tir import For, ForKind, PrimFunc, SizeVar, Var, const, decl_buffer
from compiler.tir import stmt as S
from compiler.ir.dtype import handle


@pytest.mark.parametrize("n", [1, 7, 1024])
def test_vector_add_symbolic_n(target, n):
    s, args = vector_add()
    m = compiler.build(s, args, target=target, name="test_add")
    a = np.random.rand(n).astype("float32")
    b = np.random.rand(n).astype("float32")
    c = microruntime.nd.array(np.zeros(n, "float32"))
    m["test_add"](microruntime.nd.array(a), microruntime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)
    m["main"](microruntime.nd.array(a), microruntime.nd.array(b), c)  # the entry function


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float64", "float16"])
def test_vector_add_dtypes(target, dtype):
    s, args = vector_add(dtype)
    m = compiler.build(s, args, target=target, name="add")
    if dtype.startswith("int"):
        a = np.random.randint(-60, 60, size=33).astype(dtype)
        b = np.random.randint(-60, 60, size=33).astype(dtype)
    else:
        a = (np.random.rand(33) * 4 - 2).astype(dtype)
        b = (np.random.rand(33) * 4 - 2).astype(dtype)
    c = microruntime.nd.array(np.zeros(33, dtype))
    m["add"](microruntime.nd.array(a), microruntime.nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), a + b)


def test_hand_built_primfunc_builds_on_c():
    n = SizeVar("n", "int32")
    A, B = decl_buffer((n,), "float32", "A"), decl_buffer((n,), "float32", "B")
    pa, pb, i = Var("A", handle), Var("B", handle), Var("i")
    body = For(i, const(0), n, ForKind.SERIAL, S.BufferStore(B, A[i] * 2.0, (i,)))
    f = PrimFunc((pa, pb), body, ((pa, A), (pb, B)), {"global_symbol": "twice"})
    m = compiler.build(f, target="c")
    a = np.arange(5, dtype="float32")
    b = microruntime.nd.array(np.zeros(5, "float32"))
    m["twice"](microruntime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)
    assert "__tvm_ffi_twice" in m.get_source("c")


def test_scalar_argument(target):
    from compiler import te

    n = te.var("n")
    x = te.var("x", dtype="float32")
    A = te.placeholder((n,), name="A")
    C = te.compute((n,), lambda i: A[i] * x, name="C")
    m = compiler.build(te.create_schedule(C.op), [A, x, C], target=target, name="scale")
    a = np.arange(6, dtype="float32")
    c = microruntime.nd.array(np.zeros(6, "float32"))
    m["scale"](microruntime.nd.array(a), 1.5, c)
    np.testing.assert_allclose(c.numpy(), a * 1.5)
