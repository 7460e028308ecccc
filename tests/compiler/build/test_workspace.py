"""Temporaries: > 1 KiB or dynamic -> TVMBackendAllocWorkspace/FreeWorkspace; small -> stack."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te


def two_stage(n):
    A = te.placeholder((n,), name="A")
    T = te.compute((n,), lambda i: A[i] * 2.0, name="T")
    C = te.compute((n,), lambda i: T[n - 1 - i] + 1.0, name="C")
    return te.create_schedule(C.op), [A, C]


@pytest.mark.parametrize("n", [4096, "symbolic"])
def test_large_temporary_uses_workspace(target, n):
    size = te.var("n") if n == "symbolic" else n
    m = compiler.build(*two_stage(size), target=target, name="ws")
    if target == "c":
        src = m.get_source("c")
        assert "kiln_alloc_workspace(1, dev_id, " in src
        assert "kiln_free_workspace(1, dev_id, T)" in src
        assert "void* __TVMBackendAllocWorkspace = NULL;" in src
    a = np.random.rand(4096).astype("float32")
    c = microruntime.nd.array(np.zeros(4096, "float32"))
    for _ in range(3):  # the LIFO pool is reused call after call
        m["ws"](microruntime.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), a[::-1] * 2 + 1, rtol=1e-6)


def test_small_temporary_on_stack():
    m = compiler.build(*two_stage(16), target="c", name="ws")
    src = m.get_source("c")
    assert "kiln_alloc_workspace" not in src
    assert "float T[16];" in src
    a = np.random.rand(16).astype("float32")
    c = microruntime.nd.array(np.zeros(16, "float32"))
    m["ws"](microruntime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a[::-1] * 2 + 1, rtol=1e-6)
