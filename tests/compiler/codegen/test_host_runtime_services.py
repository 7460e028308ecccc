"""Both host codegens against runtime services that fail or race, run through ctypes against
the stub runtime (llvm_stub_runtime.c), whose workspace services can be told to fail with their
own reason and whose TVMFFIHandleInitOnce counts its calls; plus the same paths end to end on
the microruntime where it can show them."""
import os
import subprocess
import sys

import numpy as np
import pytest
from llvm_host import compile_host

import compiler
import microruntime
from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.ir.errors import InternalError
from compiler.tir import (
    Allocate,
    BufferLoad,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    PrimFunc,
    Var,
    call_packed,
    cast,
    const,
    decl_buffer,
    seq,
)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ALLOC_FAILS, FREE_FAILS = 1, 2  # values of the stub's stub_workspace_fail


def _two_workspaces():
    """`ws2(A: float32[4])`: T and U (2 KiB each, so workspaces; U nested in T) are filled, then
    A[k] = T[k] + U[k]."""
    A = decl_buffer((4,), "float32", "A")
    T = decl_buffer((512,), "float32", "T")
    U = decl_buffer((512,), "float32", "U")
    i, k = Var("i", "int32"), Var("k", "int32")
    body = Allocate(T, Allocate(U, seq(
        For(i, const(0), const(512), ForKind.SERIAL, seq(
            BufferStore(T, cast("float32", i), (i,)),
            BufferStore(U, cast("float32", i) * 10.0, (i,)))),
        For(k, const(0), const(4), ForKind.SERIAL,
            BufferStore(A, BufferLoad(T, (k,)) + BufferLoad(U, (k,)), (k,))))))
    param = Var("A", handle)
    return {"ws2": ([param], [(param, A)], body)}


def test_two_workspaces_normal_use(target, tmp_path):
    lib, _ = compile_host(tmp_path, _two_workspaces(), target=target)
    a = np.zeros(4, "float32")
    lib.run("ws2", a)
    np.testing.assert_array_equal(a, [0, 11, 22, 33])
    assert lib.counter("stub_workspace_allocs") == 2 == lib.counter("stub_workspace_frees")


def test_failed_free_returns_the_runtimes_error(target, tmp_path):
    """A non-zero TVMBackendFreeWorkspace status (the runtime raised, e.g. an out-of-order free)
    makes the kernel return -1 with the runtime's message, and the enclosing workspace is still
    freed. Observable here because the stub's free fails on request; the microruntime's free
    fails only on a free that is out of LIFO order, which generated code never makes."""
    lib, _ = compile_host(tmp_path, _two_workspaces(), target=target)
    lib.set_counter("stub_workspace_fail", FREE_FAILS)
    rc, err = lib.call("ws2", np.zeros(4, "float32"))
    assert (rc, err) == (-1, "RuntimeError: stub free refused")
    assert lib.counter("stub_workspace_frees") == 2  # U's failed free, then T's on the way out


def test_failed_alloc_keeps_the_runtimes_reason(target, tmp_path):
    """On NULL from TVMBackendAllocWorkspace the kernel returns -1 and leaves the runtime's
    error (here the stub's) in place instead of writing a generic one over it."""
    lib, _ = compile_host(tmp_path, _two_workspaces(), target=target)
    lib.set_counter("stub_workspace_fail", ALLOC_FAILS)
    rc, err = lib.call("ws2", np.zeros(4, "float32"))
    assert (rc, err) == (-1, "MemoryError: stub pool refuses 2048 bytes")


def test_absurd_workspace_fails_with_the_microruntimes_reason(target):
    """End to end: a workspace of n**3 floats with n = 2**20 (4 EiB) cannot be allocated; the
    error the caller sees is the microruntime's, naming the size."""
    n = Var("n", "int64")
    param = Var("A", handle)
    A = decl_buffer((4,), "float32", "A")
    T = decl_buffer((n * n * n,), "float32", "T")
    body = Allocate(T, seq(BufferStore(T, const(1.0, "float32"), (const(0, "int64"),)),
                           BufferStore(A, BufferLoad(T, (const(0, "int64"),)), (const(0),))))
    m = compiler.build(PrimFunc((n, param), body, ((param, A),), {"global_symbol": "huge"}),
                       target=target)
    a = microruntime.nd.array(np.zeros(4, "float32"))
    with pytest.raises(Exception, match=r"cannot allocate a workspace of 4611686018427387904 "
                                        r"bytes") as info:
        m["huge"](2**20, a)
    assert "Failed to allocate" not in str(info.value)
    m["huge"](4, a)  # the pool is usable afterwards
    assert a.numpy()[0] == 1.0


def test_unlowered_large_allocate_is_an_internal_error(tmp_path):
    """The LLVM codegen puts only small constant Allocates on the stack; a larger one means
    lower_workspace did not run."""
    pytest.importorskip("llvmlite")
    from compiler.codegen.llvm import codegen_host
    from compiler.target import Target
    from compiler.tir.transform.make_packed_api import make_packed_api

    params, bmap, body = _two_workspaces()["ws2"]
    raw = make_packed_api(IRModule({"ws2": PrimFunc(tuple(params), body, tuple(bmap),
                                                    {"global_symbol": "ws2"})}))
    with pytest.raises(InternalError, match="lower_workspace must run first"):
        codegen_host(raw, Target("llvm"), str(tmp_path))


# ---- call_packed inside a parallel loop ------------------------------------------------------
def _parallel_calls():
    """`pc(A: int32[64])`: a parallel loop over i calls kiln_test.count(i) and sets A[i] = i."""
    A = decl_buffer((64,), "int32", "A")
    i = Var("i", "int32")
    body = For(i, const(0), const(64), ForKind.PARALLEL, seq(
        Evaluate(call_packed("kiln_test.count", i)),
        BufferStore(A, i, (i,))))
    param = Var("A", handle)
    return [param], [(param, A)], body


def test_parallel_call_packed_looks_up_once_through_init_once(target, tmp_path):
    """Each task reaches the call site's handle through TVMFFIHandleInitOnce (the stub counts
    its calls and runs the lookup under a lock) until one has filled it. What this cannot
    observe is a lost race itself: a racy cache would mostly also give correct results."""
    import threading

    params, bmap, body = _parallel_calls()
    lib, art = compile_host(tmp_path, {"pc": (params, bmap, body)}, target=target, threads=4)
    seen, lock = [], threading.Lock()

    def count(args):
        with lock:
            seen.append(args[0].v_int64)
        return 0

    lib.register("kiln_test.count", count)
    a = np.zeros(64, "int32")
    for _ in range(3):
        lib.run("pc", a)
        np.testing.assert_array_equal(a, np.arange(64))
    assert sorted(seen) == sorted(list(range(64)) * 3)
    assert 1 <= lib.counter("stub_init_once_calls") <= 4
    text = art.sources.get("c") or art.sources["ll"]
    assert "HandleInitOnce" in text
    if target == "c":
        assert "__atomic_load_n(cache, __ATOMIC_ACQUIRE)" in text
    else:
        assert "load atomic ptr" in text and "acquire" in text


def test_parallel_call_packed_on_two_runtime_threads(target, tmp_path):
    """End to end on the microruntime's pool with MR_NUM_THREADS=2: every call arrives."""
    params, bmap, body = _parallel_calls()
    m = compiler.build(PrimFunc(tuple(params), body, tuple(bmap), {"global_symbol": "pc"}),
                       target=target)
    lib = str(tmp_path / "pc.so")
    m.export_library(lib)
    code = (
        "import sys, threading, numpy as np, microruntime as mr\n"
        "assert mr.num_threads() == 2, mr.num_threads()\n"
        "lock, seen = threading.Lock(), []\n"
        "def count(i):\n"
        "    with lock:\n"
        "        seen.append(i)\n"
        "mr.register_func('kiln_test.count', count)\n"
        "f = mr.load_module(sys.argv[1])['pc']\n"
        "a = mr.nd.array(np.zeros(64, 'int32'))\n"
        "for _ in range(20):\n"
        "    f(a)\n"
        "    np.testing.assert_array_equal(a.numpy(), np.arange(64))\n"
        "assert sorted(seen) == sorted(list(range(64)) * 20), len(seen)\n"
        "print('ok')\n")
    env = dict(os.environ, MR_NUM_THREADS="2", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code, lib], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout
