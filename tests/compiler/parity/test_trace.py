"""`tir.trace` as classic TVM defines it: each evaluation calls the named global function with
the traced arguments (the traced value last); the expression is the traced value, or the
function's return value when it returns a number. Built on llvm and c."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, tir
from compiler.ir.errors import IRError


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_trace_passes_the_value_through_and_sees_every_element(target, dtype):
    seen = []
    name = f"parity.trace_record_{target}_{dtype}"
    runtime.register_func(name, lambda *args: seen.append(tuple(args)), override=True)
    n = 5
    A = te.placeholder((n,), dtype=dtype, name="A")
    B = te.compute((n,), lambda i: tir.trace([i, A[i]], name) * 2, name="B")
    f = compiler.build(te.create_schedule(B.op), [A, B], target)
    a = np.arange(1, n + 1).astype(dtype)
    b = runtime.nd.array(np.zeros(n, dtype))
    f(runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)
    assert sorted(seen) == [(i, a[i].item()) for i in range(n)]


@pytest.mark.parametrize("dtype,ret", [("int32", 13), ("float32", 2.5), ("float64", 7),
                                       ("int64", 4.0)])
def test_trace_return_value_replaces_the_traced_value(target, dtype, ret):
    name = f"parity.trace_change_{target}_{dtype}"
    runtime.register_func(name, lambda x: ret, override=True)
    A = te.placeholder((3,), dtype=dtype, name="A")
    B = te.compute((3,), lambda i: tir.trace([A[i]], name) + A[i], name="B")
    f = compiler.build(te.create_schedule(B.op), [A, B], target)
    a = np.array([1, 2, 3], dtype=dtype)
    b = runtime.nd.array(np.zeros(3, dtype))
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), np.array(ret, dtype=dtype) + a)


def test_default_action_prints_the_arguments(target, capfd):
    A = te.placeholder((2,), name="A")
    B = te.compute((2,), lambda i: tir.trace([i, A[i]]), name="B")
    f = compiler.build(te.create_schedule(B.op), [A, B], target)
    b = runtime.nd.array(np.zeros(2, "float32"))
    f(runtime.nd.array(np.array([1.5, 2.5], "float32")), b)
    np.testing.assert_array_equal(b.numpy(), [1.5, 2.5])
    out = capfd.readouterr().out.split("\n")
    assert "0 1.5" in out and "1 2.5" in out


def test_trace_rejects_what_it_cannot_trace():
    with pytest.raises(IRError, match="non-empty list"):
        tir.trace(te.var("x"))
    with pytest.raises(IRError, match="scalars"):
        tir.trace([tir.Broadcast(tir.const(1.0), 4)])
