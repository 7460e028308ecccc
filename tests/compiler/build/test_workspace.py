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


# ---- error paths: workspaces live at a failure are freed before the error returns ------------
# The runtime's per-thread pool holds at most 1024 live workspaces (MR_MAX_WORKSPACE_DEPTH): a
# kernel that leaked its workspace on each failure would fail to allocate within that many calls.
LEAK_PROBE_CALLS = 1100


def _refuse(flag):
    if flag:
        raise ValueError("the callee refuses")


def _kernel_with_workspace(fails_with, parallel=False):
    """`f(flag: int32, A: float32[4])`: T (2 KiB, a workspace) is filled with 0..511, then
    `fails_with(flag)` (a statement that fails when flag != 0) runs, then A[0] = T[3]. With
    `parallel`, a parallel loop of 4 iterations, each with its own workspace U, also runs
    `fails_with(flag)`."""
    from compiler.tir import (Allocate, BufferLoad, BufferStore, For, ForKind, PrimFunc, Var, cast, const, decl_buffer, seq)
    from compiler.ir.dtype import handle

    flag, param = Var("flag", "int32"), Var("A", handle)
    A = decl_buffer((4,), "float32", "A")
    T = decl_buffer((512,), "float32", "T")
    i = Var("i", "int32")
    fill = For(i, const(0), const(512), ForKind.SERIAL,
               BufferStore(T, cast("float32", i), (i,)))
    steps = [fill]
    if parallel:
        U = decl_buffer((512,), "float32", "U")
        p, j = Var("p", "int32"), Var("j", "int32")
        task = Allocate(U, seq(
            For(j, const(0), const(512), ForKind.SERIAL,
                BufferStore(U, BufferLoad(T, (j,)), (j,))),
            fails_with(flag),
            BufferStore(A, BufferLoad(U, (p,)), (p,))))
        steps.append(For(p, const(0), const(4), ForKind.PARALLEL, task))
    else:
        steps.append(fails_with(flag))
    steps.append(BufferStore(A, BufferLoad(T, (const(3),)), (const(0),)))
    body = Allocate(T, seq(*steps))
    return PrimFunc((flag, param), body, ((param, A),), {"global_symbol": "ws_fail"})


def _failing_call(flag):
    from compiler.tir import Evaluate
    from compiler.tir import call_packed

    return Evaluate(call_packed("kiln_test.refuse", flag))


def _failing_assert(flag):
    from compiler.tir import AssertStmt, Evaluate, const, seq

    return AssertStmt(flag == 0, "ValueError", ("the callee refuses",), seq(Evaluate(const(0))))


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("fails_with", [_failing_call, _failing_assert], ids=["call", "assert"])
def test_failure_frees_live_workspaces(target, registered, fails_with, parallel):
    registered("kiln_test.refuse", _refuse)
    m = compiler.build(_kernel_with_workspace(fails_with, parallel), target=target)
    a = microruntime.nd.array(np.zeros(4, "float32"))
    for _ in range(LEAK_PROBE_CALLS):
        with pytest.raises(ValueError, match="the callee refuses"):
            m["ws_fail"](1, a)
    m["ws_fail"](0, a)
    expected = [3, 1, 2, 3] if parallel else [3, 0, 0, 0]
    np.testing.assert_array_equal(a.numpy(), expected)
