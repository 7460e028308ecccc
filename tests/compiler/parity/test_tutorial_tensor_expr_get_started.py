"""TVM's tutorial "Working with Operators Using Tensor Expression" (tensor_expr_get_started.py),
its CPU parts, with `import tvm` replaced by Kiln's packages: vector add (default, parallel,
parallel + vectorized schedules), the module saved as an object, linked with cc.create_shared and
loaded back, exported as one library, the generated source, and the matrix multiplication steps
(blocking, vectorization, loop permutation). Timings are only printed, as there."""
import numpy as np

import compiler as tvm_compiler
import microruntime as tvm
from compiler import te
from compiler.contrib import cc, utils
from compiler.target import Target


def test_vector_add(target):
    tgt = Target(target=target, host=target)
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    fadd = tvm_compiler.build(s, [A, B, C], tgt, name="myadd")

    dev = tvm.device(tgt.kind.name, 0)
    n = 1024
    a = tvm.nd.array(np.random.uniform(size=n).astype(A.dtype), dev)
    b = tvm.nd.array(np.random.uniform(size=n).astype(B.dtype), dev)
    c = tvm.nd.array(np.zeros(n, dtype=C.dtype), dev)
    fadd(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())

    def evaluate_addition(func, target, optimization, log):
        dev = tvm.device(target.kind.name, 0)
        n = 32768
        a = tvm.nd.array(np.random.uniform(size=n).astype(A.dtype), dev)
        b = tvm.nd.array(np.random.uniform(size=n).astype(B.dtype), dev)
        c = tvm.nd.array(np.zeros(n, dtype=C.dtype), dev)
        evaluator = func.time_evaluator(func.entry_name, dev, number=10)
        mean_time = evaluator(a, b, c).mean
        print("%s: %f" % (optimization, mean_time))
        log.append((optimization, mean_time))
        np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())

    log = []
    evaluate_addition(fadd, tgt, "naive", log=log)

    s[C].parallel(C.op.axis[0])
    text = str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))
    assert "parallel" in text
    fadd_parallel = tvm_compiler.build(s, [A, B, C], tgt, name="myadd_parallel")
    fadd_parallel(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    evaluate_addition(fadd_parallel, tgt, "parallel", log=log)

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    factor = 4
    outer, inner = s[C].split(C.op.axis[0], factor=factor)
    s[C].parallel(outer)
    s[C].vectorize(inner)
    fadd_vector = tvm_compiler.build(s, [A, B, C], tgt, name="myadd_parallel")
    evaluate_addition(fadd_vector, tgt, "vector", log=log)
    text = str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))
    assert "parallel" in text and "i.inner" in text  # n symbolic: the tail is guarded
    assert [name for name, _ in log] == ["naive", "parallel", "vector"]


def test_save_load_and_export(target):
    tgt = Target(target=target, host=target)
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    fadd = tvm_compiler.build(s, [A, B, C], tgt, name="myadd")
    dev = tvm.device(tgt.kind.name, 0)
    a = tvm.nd.array(np.random.uniform(size=1024).astype(A.dtype), dev)
    b = tvm.nd.array(np.random.uniform(size=1024).astype(B.dtype), dev)
    c = tvm.nd.array(np.zeros(1024, dtype=C.dtype), dev)

    source = fadd.get_source()
    assert ("myadd" in source) and (("define" in source) if target == "llvm"
                                    else ("int32_t" in source))

    temp = utils.tempdir()
    fadd.save(temp.relpath("myadd.o"))
    cc.create_shared(temp.relpath("myadd.so"), [temp.relpath("myadd.o")])
    assert temp.listdir() == ["myadd.o", "myadd.so"]

    fadd1 = tvm.load_module(temp.relpath("myadd.so"))
    fadd1(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())

    fadd.export_library(temp.relpath("myadd_pack.so"))
    fadd2 = tvm.load_module(temp.relpath("myadd_pack.so"))
    c2 = tvm.nd.array(np.zeros(1024, dtype=C.dtype), dev)
    fadd2(a, b, c2)
    np.testing.assert_allclose(c2.numpy(), a.numpy() + b.numpy())


def test_matrix_multiplication_steps(target):
    M = K = N = 128
    dtype = "float32"
    tgt = Target(target=target, host=target)
    dev = tvm.device(tgt.kind.name, 0)
    a = tvm.nd.array(np.random.rand(M, K).astype(dtype), dev)
    b = tvm.nd.array(np.random.rand(K, N).astype(dtype), dev)
    answer = np.dot(a.numpy(), b.numpy())

    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="C")
    s = te.create_schedule(C.op)

    log = []

    def evaluate_operation(s, vars, target, name, optimization, log):
        func = tvm_compiler.build(s, [A, B, C], target=target, name="mmult")
        assert func
        c = tvm.nd.array(np.zeros((M, N), dtype=dtype), dev)
        func(a, b, c)
        np.testing.assert_allclose(c.numpy(), answer, rtol=1e-5)
        evaluator = func.time_evaluator(func.entry_name, dev, number=1)
        log.append((optimization, evaluator(a, b, c).mean))

    evaluate_operation(s, [A, B, C], target=tgt, name="mmult", optimization="none", log=log)

    bn = 32
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (k,) = s[C].op.reduce_axis
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, ki, xi, yi)
    evaluate_operation(s, [A, B, C], target=tgt, name="mmult", optimization="blocking", log=log)

    s[C].vectorize(yi)
    evaluate_operation(s, [A, B, C], target=tgt, name="mmult", optimization="vectorization",
                       log=log)
    assert "ramp(" in str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))

    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (k,) = s[C].op.reduce_axis
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)
    evaluate_operation(s, [A, B, C], target=tgt, name="mmult", optimization="loop permutation",
                       log=log)
    assert len(log) == 4
