"""Parallel loops really run through TVMBackendParallelLaunch, split into per-task chunks."""
import os
import subprocess
import sys

import compiler
from compiler import te

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def parallel_add_one():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    C = te.compute((n,), lambda i: A[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    outer, _ = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(outer)
    return s, [A, C]


def test_launch_runs_every_task_chunk(target, tmp_path):
    m = compiler.build(*parallel_add_one(), target=target, name="add_one")
    lib = str(tmp_path / "add_one.so")
    m.export_library(lib)
    host = str(tmp_path / "parallel_host")
    subprocess.run(["cc", "-std=c11", "-O1", os.path.join(HERE, "parallel_host.c"), "-o", host,
                    "-rdynamic", "-ldl"], check=True)
    n = 100  # 13 chunks of 8 -> task 0 takes chunks 0..6, task 1 chunks 7..12
    out = subprocess.run([host, lib, "add_one", str(n)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False)
    assert out.returncode == 0, out.stdout
    expected = float(sum(range(n)) + n)
    assert out.stdout.strip() == f"launches=1 tasks=10 sum={expected:.1f}"


def test_parallel_on_runtime_thread_pool(target, tmp_path):
    m = compiler.build(*parallel_add_one(), target=target, name="add_one")
    lib = str(tmp_path / "add_one.so")
    m.export_library(lib)
    code = (
        "import sys, numpy as np, microruntime as mr\n"
        "assert mr.num_threads() == 2, mr.num_threads()\n"
        "f = mr.load_module(sys.argv[1])['add_one']\n"
        "a = np.random.rand(1003).astype('float32')\n"
        "c = mr.nd.array(np.zeros(1003, 'float32'))\n"
        "for _ in range(20):\n"
        "    f(mr.nd.array(a), c)\n"
        "    np.testing.assert_allclose(c.numpy(), a + 1, rtol=1e-6)\n"
        "print('ok')\n")
    env = dict(os.environ, MR_NUM_THREADS="2", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code, lib], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout


def test_failing_task_error_reaches_the_caller(target):
    """A task's own error (kind and message), not a generic one, is what the caller sees."""
    import numpy as np
    import pytest

    import microruntime
    from compiler.tir import (AssertStmt, BufferLoad, BufferStore, For, ForKind, PrimFunc, Var, const, decl_buffer)
    from compiler.ir.dtype import handle

    param, A = Var("A", handle), decl_buffer((8,), "int32", "A")
    i = Var("i", "int32")
    body = For(i, const(0), const(8), ForKind.PARALLEL, AssertStmt(
        BufferLoad(A, (i,)) >= 0, "ValueError", ("element ", i, " is negative"),
        BufferStore(A, BufferLoad(A, (i,)) + 1, (i,))))
    m = compiler.build(PrimFunc((param,), body, ((param, A),), {"global_symbol": "check"}),
                       target=target)
    a = np.arange(8, dtype="int32")
    a[5] = -3
    with pytest.raises(ValueError, match="element 5 is negative"):
        m["check"](microruntime.nd.array(a))
