"""TVM's tutorial "How to optimize GEMM on CPU" (opt_gemm.py) with `import tvm` replaced by
Kiln's packages, at a smaller size (M = K = N = 256) so it runs in seconds: every step built and
its result compared with numpy (baseline, blocking, vectorization, loop permutation, array
packing, write cache, parallel), and the IR of each step checked for what the step does.
Timings are measured with time_evaluator and only printed, as there."""
import numpy
import pytest

import compiler as tvm_compiler
import microruntime as tvm
from compiler import te, tir

M = K = N = 256
dtype = "float32"
bn = 32
kfactor = 4


@pytest.fixture(scope="module")
def data():
    a = numpy.random.rand(M, K).astype(dtype)
    b = numpy.random.rand(K, N).astype(dtype)
    return a, b, numpy.dot(a, b)


def _algorithm():
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    return k, A, B, C


def _packed():
    k, A, B, _ = _algorithm()
    packedB = te.compute(
        (N / bn, K, bn), lambda bigN, k, littleN: B[k, bigN * bn + littleN], name="packedB"
    )
    C = te.compute(
        (M, N),
        lambda m, n: te.sum(A[m, k] * packedB[n // bn, k, tir.indexmod(n, bn)], axis=k),
        name="C",
    )
    return A, B, C, packedB


def _check(target, s, A, B, C, data, step):
    a_np, b_np, answer = data
    dev = tvm.device(target, 0)
    func = tvm_compiler.build(s, [A, B, C], target=target, name="mmult")
    assert func
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.array(numpy.zeros((M, N), dtype=dtype), dev)
    func(a, b, c)
    numpy.testing.assert_allclose(c.numpy(), answer, rtol=1e-5)
    evaluator = func.time_evaluator(func.entry_name, dev, number=1)
    print("%s: %f" % (step, evaluator(a, b, c).mean))
    return str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))


def test_baseline_blocking_vectorization_permutation(target, data):
    k, A, B, C = _algorithm()
    s = te.create_schedule(C.op)
    ir = _check(target, s, A, B, C, data, "Baseline")
    assert ir.count("for ") == 3

    # Blocking
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, ki, mi, ni)
    ir = _check(target, s, A, B, C, data, "Opt1")
    assert ir.index("for k.outer in") < ir.index("for k.inner in") < ir.index("for m.inner in")

    # Vectorization
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, ki, mi, ni)
    s[C].vectorize(ni)
    ir = _check(target, s, A, B, C, data, "Opt2")
    assert "ramp(" in ir and "n.inner" not in ir

    # Loop permutation
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, mi, ki, ni)
    s[C].vectorize(ni)
    ir = _check(target, s, A, B, C, data, "Opt3")
    assert ir.index("for m.inner in") < ir.index("for k.inner in")


def test_array_packing(target, data):
    A, B, C, packedB = _packed()
    assert [int(x) for x in packedB.shape] == [N // bn, K, bn]
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, mi, ki, ni)
    s[C].vectorize(ni)
    bigN, _, littleN = s[packedB].op.axis
    s[packedB].vectorize(littleN)
    s[packedB].parallel(bigN)
    ir = _check(target, s, A, B, C, data, "Opt4")
    assert "packedB = allocate" in ir and "parallel" in ir


@pytest.mark.parametrize("parallel", [False, True])
def test_write_cache_and_parallel(target, data, parallel):
    A, B, C, packedB = _packed()
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    s[CC].compute_at(s[C], no)
    mc, nc = s[CC].op.axis
    (kaxis,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(kaxis, factor=kfactor)
    s[CC].reorder(ko, mc, ki, nc)
    s[CC].vectorize(nc)
    s[CC].unroll(ki)
    if parallel:
        s[C].parallel(mo)
    bigN, _, littleN = s[packedB].op.axis
    s[packedB].vectorize(littleN)
    s[packedB].parallel(bigN)
    ir = _check(target, s, A, B, C, data, "Opt6" if parallel else "Opt5")
    assert "C.global = allocate([1024]" in ir  # a 32 x 32 block, reused per block
    assert "k.inner" not in ir  # unrolled
    assert ir.count("parallel") == (2 if parallel else 1)
