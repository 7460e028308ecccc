"""Vector add on GPU targets: OpenCL run on PoCL vs numpy, CUDA compiled to PTX, Metal text."""
import numpy as np
import pytest
from gpu_harness import metal_source, ptx_of, run_opencl

from compiler import te


def vector_add(factor=64, dtype="float32"):
    n = te.var("n")
    A = te.placeholder((n,), name="A", dtype=dtype)
    B = te.placeholder((n,), name="B", dtype=dtype)
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    bx, tx = s[C].split(C.op.axis[0], factor=factor)
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


@pytest.mark.parametrize("n", [1, 64, 1000])
def test_vector_add_opencl_runs(n):
    s, args = vector_add()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    _, _, c = run_opencl(s, args, [a, b, np.zeros(n, "float32")], name="vadd")
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_vector_add_cuda_compiles_to_ptx():
    ptx = ptx_of(*vector_add(), name="vadd")
    assert ".visible .entry vadd_kernel(" in ptx


def test_vector_add_half_cuda_compiles_to_ptx():
    ptx = ptx_of(*vector_add(dtype="float16"), name="vadd16")
    assert ".visible .entry vadd16_kernel(" in ptx


def test_vector_add_metal_frame():
    text = metal_source(*vector_add(), name="vadd")
    assert "kernel void vadd_kernel(" in text
    assert "device float* A [[buffer(0)]]" in text
    assert "constant vadd_kernel_args_t& arg [[buffer(3)]]" in text
    assert "uint3 threadIdx [[thread_position_in_threadgroup]]" in text
    assert "int n = arg.n;" in text
