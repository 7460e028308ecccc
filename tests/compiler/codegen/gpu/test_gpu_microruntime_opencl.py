"""GPU builds run end to end on microruntime.opencl() (PoCL here): the host function (c or
llvm) selects the device and launches the kernels of the imported OpenCL module; the exported
library (one .so, device code in its blob) loads and runs too."""
import numpy as np
import pytest
from test_gpu_matmul_shared import matmul
from test_gpu_reduction import row_reduce
from test_gpu_vector_add import vector_add

import compiler
import microruntime

pytestmark = pytest.mark.skipif(not microruntime.enabled("opencl"),
                                reason="no OpenCL driver/device for the microruntime")


def _arrays(*xs):
    dev = microruntime.opencl(0)
    return [microruntime.nd.array(x, dev) for x in xs]


def test_vector_add(target):
    m = compiler.build(*vector_add(), target="opencl", target_host=target, name="vadd")
    a, b = np.arange(1000, dtype="float32"), np.ones(1000, "float32")
    A, B, C = _arrays(a, b, np.zeros(1000, "float32"))
    m["vadd"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)


def test_matmul_shared_and_exported_library(target, tmp_path):
    m = compiler.build(*matmul(), target="opencl", target_host=target, name="mm")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 40)).astype("float32")
    b = rng.standard_normal((40, 24)).astype("float32")
    A, B, C = _arrays(a, b, np.zeros((32, 24), "float32"))
    m["mm"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    path = str(tmp_path / "mm.so")
    m.export_library(path)
    C2, = _arrays(np.zeros((32, 24), "float32"))
    microruntime.load_module(path)["mm"](A, B, C2)
    np.testing.assert_allclose(C2.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_cross_thread_reduction(target):
    m = compiler.build(*row_reduce(threads=48), target="opencl", target_host=target,
                       name="rowred")
    a = np.random.default_rng(6).standard_normal((5, 300)).astype("float32")
    A, B = _arrays(a, np.zeros(5, "float32"))
    m["rowred"](A, B)
    np.testing.assert_allclose(B.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [64, 1024])
def test_intermediate_between_kernels_lives_on_the_device(target, n):
    # B, computed by one kernel and read by the next, is allocated on the OpenCL device by the
    # host function (a small one too: never on the host stack).
    A = compiler.te.placeholder((n,), name="A")
    B = compiler.te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = compiler.te.compute((n,), lambda i: B[i] + 1.0, name="C")
    s = compiler.te.create_schedule(C.op)
    for t in (B, C):
        bx, tx = s[t].split(t.op.axis[0], factor=32)
        s[t].bind(bx, compiler.te.thread_axis("blockIdx.x"))
        s[t].bind(tx, compiler.te.thread_axis("threadIdx.x"))
    m = compiler.build(s, [A, C], target="opencl", target_host=target, name="two")
    a = np.arange(n, dtype="float32")
    Ad, Cd = _arrays(a, np.zeros(n, "float32"))
    m["two"](Ad, Cd)
    np.testing.assert_allclose(Cd.numpy(), a * 2 + 1)
