"""Row sums reduced across the threads of a block (TVM's cross-thread reduction): split the
reduction, rfactor the inner part, bind the rfactor axis to threadIdx.x; each thread reduces
its share locally and the block combines the shares by a tree in shared memory."""
import numpy as np
import pytest
from gpu_harness import build, metal_source, ptx_of, run_opencl

from compiler import te


def row_reduce(rows=5, cols=300, threads=64, op="sum"):
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    fn = te.sum if op == "sum" else te.max
    B = te.compute((rows,), lambda i: fn(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _, ki = s[B].split(B.op.reduce_axis[0], factor=threads)
    BF = s.rfactor(B, ki)
    tx = s[B].op.reduce_axis[0]
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[BF].compute_at(s[B], tx)
    s[B].bind(s[B].op.axis[0], te.thread_axis("blockIdx.x"))
    return s, [A, B]


@pytest.mark.parametrize("threads,op", [(64, "sum"), (48, "sum"), (32, "max")])
def test_cross_thread_reduction_opencl_runs(threads, op):
    s, args = row_reduce(threads=threads, op=op)
    a = np.random.default_rng(4).standard_normal((5, 300)).astype("float32")
    _, b = run_opencl(s, args, [a, np.zeros(5, "float32")], name="rowred")
    ref = a.sum(axis=1) if op == "sum" else a.max(axis=1)
    np.testing.assert_allclose(b, ref, rtol=1e-5, atol=1e-5)


def test_cross_thread_reduction_tree_in_shared_memory():
    text = build(*row_reduce(), "opencl", "rowred").imported_modules[0].get_source()
    assert "__local float B_red_buf[64];" in text
    # the partial values are stored, then 6 halving steps (32, 16, ..., 1), a barrier after each
    assert text.count("barrier(CLK_LOCAL_MEM_FENCE);") == 7
    assert "if ((tx < 32)) {" in text or "< 32)) {" in text


def test_cross_thread_reduction_cuda_compiles_to_ptx():
    ptx = ptx_of(*row_reduce(), name="rowred")
    assert "bar.sync" in ptx


def test_cross_thread_reduction_metal_barriers():
    text = metal_source(*row_reduce(), name="rowred")
    assert text.count("threadgroup_barrier(mem_flags::mem_threadgroup);") == 7
