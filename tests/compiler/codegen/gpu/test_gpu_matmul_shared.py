"""Matmul with shared-memory tiling (TVM's classic GPU schedule): cache_read "shared" +
cache_write "local" + compute_at + thread binding; barriers from thread_sync."""
import numpy as np
from gpu_harness import build, metal_source, ptx_of, run_opencl

from compiler import te

TILE = 8


def matmul(M=32, N=24, K=40, tile=TILE):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "shared", [C])
    BB = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    bi, bj, ti, tj = s[C].tile(C.op.axis[0], C.op.axis[1], tile, tile)
    s[C].bind(bi, te.thread_axis("blockIdx.y"))
    s[C].bind(bj, te.thread_axis("blockIdx.x"))
    s[C].bind(ti, te.thread_axis("threadIdx.y"))
    s[C].bind(tj, te.thread_axis("threadIdx.x"))
    s[CL].compute_at(s[C], tj)
    ko, _ = s[CL].split(CL.op.reduce_axis[0], factor=tile)
    for X in (AA, BB):
        s[X].compute_at(s[CL], ko)
        y, x = s[X].op.axis
        s[X].bind(y, te.thread_axis("threadIdx.y"))
        s[X].bind(x, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


def test_matmul_shared_opencl_runs():
    s, args = matmul()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 40)).astype("float32")
    b = rng.standard_normal((40, 24)).astype("float32")
    _, _, c = run_opencl(s, args, [a, b, np.zeros((32, 24), "float32")], name="mm")
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_shared_tiles_and_barriers_in_opencl_source():
    text = build(*matmul(), "opencl", "mm").imported_modules[0].get_source()
    assert f"__local float A_shared[{TILE * TILE}];" in text
    assert f"__local float B_shared[{TILE * TILE}];" in text
    assert "float C_local[1];" in text
    # one barrier before the tiles are read, one before the next tiles overwrite them
    assert text.count("barrier(CLK_LOCAL_MEM_FENCE);") == 2


def test_matmul_shared_cuda_compiles_to_ptx():
    ptx = ptx_of(*matmul(), name="mm")
    assert ".shared" in ptx and "bar.sync" in ptx


def test_matmul_shared_metal_threadgroup_memory():
    text = metal_source(*matmul(), name="mm")
    assert f"threadgroup float A_shared[{TILE * TILE}];" in text
    assert text.count("threadgroup_barrier(mem_flags::mem_threadgroup);") == 2
