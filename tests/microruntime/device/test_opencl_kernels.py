"""OpenCL device modules loaded from payload bytes written by hand (devmod_bytes.py): kernels
called with buffers, scalars and launch extents, checked against numpy and against the same
kernel run through pyopencl on the same arrays; build errors and argument errors."""
import numpy as np
import pytest
from devmod_bytes import FLOAT16, FLOAT64, HANDLE, INT32, INT64, UINT8, payload

import microruntime as mr
from microruntime import nd

pytestmark = pytest.mark.skipif(not mr.enabled("opencl"),
                                reason="no OpenCL driver with a device (libOpenCL.so.1)")

VADD = """
__kernel void vadd(__global const float* restrict A, __global const float* restrict B,
                   __global float* restrict C, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) C[i] = A[i] + B[i];
}
"""

AXPY2D = """
__kernel void axpy2d(__global double* Y, __global const double* X, double alpha, long rows,
                     int cols, uchar flag) {
  int r = get_group_id(1) * get_local_size(1) + get_local_id(1);
  int c = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (r < rows && c < cols) Y[r * cols + c] += alpha * X[r * cols + c] * flag;
}
"""

# A block sum in dynamic local memory: the last __local argument is sized by the launch.
BLOCK_SUM = """
__kernel void block_sum(__global const float* X, __global float* out, __local float* tmp) {
  int t = get_local_id(0), b = get_group_id(0), n = get_local_size(0);
  tmp[t] = X[b * n + t];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n / 2; s > 0; s /= 2) {
    if (t < s) tmp[t] += tmp[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[b] = tmp[0];
}
"""


def load(data):
    return mr.get_global_func("ffi.Module.load_from_bytes.opencl")(data)


@pytest.fixture(scope="module")
def vadd_module():
    return load(payload("cl", [("vadd", [HANDLE, HANDLE, HANDLE, INT32],
                                ["blockIdx.x", "threadIdx.x"])], VADD))


@pytest.mark.parametrize("n", [1, 64, 1000])
def test_vadd_matches_numpy_and_pyopencl(vadd_module, n):
    cl = pytest.importorskip("pyopencl")
    dev = mr.opencl(0)
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    A, B, C = nd.array(a, dev), nd.array(b, dev), nd.empty((n,), "float32", dev)
    block = 64
    vadd_module["vadd"](A, B, C, n, (n + block - 1) // block, block)
    ours = C.numpy()
    np.testing.assert_allclose(ours, a + b, rtol=1e-6)

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    ga = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    gb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    gc = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    prog = cl.Program(ctx, VADD).build()
    groups = (n + block - 1) // block
    prog.vadd(queue, (groups * block,), (block,), ga, gb, gc, np.int32(n))
    theirs = np.empty_like(a)
    cl.enqueue_copy(queue, theirs, gc)
    np.testing.assert_array_equal(ours, theirs)


def test_module_attributes(vadd_module):
    assert vadd_module.type_key == "opencl"
    assert vadd_module.get_source() == VADD
    assert vadd_module.implements_function("vadd")
    assert not vadd_module.implements_function("nope")
    with pytest.raises(AttributeError, match="no function 'nope'"):
        vadd_module["nope"]


def test_scalars_and_2d_launch():
    mod = load(payload("cl", [("axpy2d", [HANDLE, HANDLE, FLOAT64, INT64, INT32, UINT8],
                               ["blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"])],
                       AXPY2D))
    dev = mr.opencl(0)
    rows, cols = 13, 37
    rng = np.random.default_rng(0)
    y = rng.standard_normal((rows, cols))
    x = rng.standard_normal((rows, cols))
    Y, X = nd.array(y, dev), nd.array(x, dev)
    bx, by = 8, 4
    mod["axpy2d"](Y, X, 0.5, rows, cols, 2, (cols + bx - 1) // bx, (rows + by - 1) // by, bx, by)
    np.testing.assert_allclose(Y.numpy(), y + 0.5 * x * 2, rtol=1e-12)


def test_float16_scalars_are_rounded_like_numpy():
    # The kernel sees the half's bits (a half parameter needs cl_khr_fp16, which not every
    # device has), so the conversion is checked bit for bit.
    code = "__kernel void put(__global ushort* out, ushort v) { out[get_group_id(0)] = v; }"
    mod = load(payload("cl", [("put", [HANDLE, FLOAT16], ["blockIdx.x"])], code))
    values = [1.5, -2.0, 65504.0, 70000.0, 1e-5, -6.1e-5, 1e-8, 0.1, 2049.0, 2051.0,
              float("inf"), float("nan")]
    out = nd.empty((1,), "uint16", mr.opencl(0))
    for v in values:
        mod["put"](out, v, 1)
        with np.errstate(over="ignore"):
            expected = np.array(v, "float32").astype("float16").view("uint16")
        assert out.numpy()[0] == expected or (np.isnan(v) and out.numpy()[0] & 0x7C00 == 0x7C00), v


def test_dynamic_local_memory():
    mod = load(payload("cl", [("block_sum", [HANDLE, HANDLE],
                               ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"])],
                       BLOCK_SUM))
    dev = mr.opencl(0)
    blocks, n = 5, 32
    x = np.arange(blocks * n, dtype="float32")
    out = nd.empty((blocks,), "float32", dev)
    mod["block_sum"](nd.array(x, dev), out, blocks, n, n * 4)
    np.testing.assert_allclose(out.numpy(), x.reshape(blocks, n).sum(axis=1))


def test_launch_on_a_stream(vadd_module):
    dev = mr.opencl(0)
    stream = dev.create_raw_stream()
    dev.set_raw_stream(stream)
    try:
        a = nd.array(np.full(256, 2, "float32"), dev)
        c = nd.empty((256,), "float32", dev)
        vadd_module["vadd"](a, a, c, 256, 4, 64)
        dev.sync()
        np.testing.assert_array_equal(c.numpy(), 4)
    finally:
        dev.set_raw_stream(None)
        dev.free_raw_stream(stream)


def test_empty_launch_does_nothing(vadd_module):
    c = nd.array(np.full(4, 7, "float32"), mr.opencl(0))
    vadd_module["vadd"](c, c, c, 4, 0, 64)
    np.testing.assert_array_equal(c.numpy(), 7)


def test_argument_errors(vadd_module):
    f = vadd_module["vadd"]
    c = nd.empty((4,), "float32", mr.opencl(0))
    with pytest.raises(TypeError, match=r"kernel 'vadd' takes 6 arguments \(4 kernel arguments, "
                                        r"then 2 launch extents\), got 4"):
        f(c, c, c, 4)
    with pytest.raises(TypeError, match="kernel 'vadd': argument 0 must be a buffer"):
        f(1.5, c, c, 4, 1, 4)
    with pytest.raises(TypeError, match="kernel 'vadd': argument 3 must be an int"):
        f(c, c, c, 2.5, 1, 4)
    with pytest.raises(ValueError, match="launch extent 1 is -4"):
        f(c, c, c, 4, 1, -4)
    with pytest.raises(RuntimeError, match="CL_INVALID_WORK_GROUP_SIZE"):
        f(c, c, c, 4, 1, 1 << 20)


def test_build_error_carries_the_log():
    bad = "__kernel void broken(__global float* A) { A[0] = undefined_name_xyz; }\n"
    mod = load(payload("cl", [("broken", [HANDLE], ["threadIdx.x"])], bad))
    a = nd.empty((1,), "float32", mr.opencl(0))
    with pytest.raises(RuntimeError, match=r"(?s)building the module's program for device 0 "
                                           r"failed.*build log:.*undefined_name_xyz"):
        mod["broken"](a, 1)


def test_kernel_missing_from_the_code():
    mod = load(payload("cl", [("absent", [HANDLE], ["threadIdx.x"])], VADD))
    a = nd.empty((1,), "float32", mr.opencl(0))
    with pytest.raises(RuntimeError, match="kernel 'absent' is not in the module's program"):
        mod["absent"](a, 1)


def test_two_kernels_one_program():
    code = VADD + BLOCK_SUM
    mod = load(payload("cl", [("vadd", [HANDLE, HANDLE, HANDLE, INT32],
                               ["blockIdx.x", "threadIdx.x"]),
                              ("block_sum", [HANDLE, HANDLE],
                               ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"])],
                       code))
    dev = mr.opencl(0)
    x = nd.array(np.ones(64, "float32"), dev)
    y = nd.empty((64,), "float32", dev)
    s = nd.empty((1,), "float32", dev)
    mod["vadd"](x, x, y, 64, 1, 64)
    mod["block_sum"](y, s, 1, 64, 256)
    assert s.numpy()[0] == 128


def test_signature_mismatch_names_the_argument():
    """The payload says 5 arguments, the OpenCL kernel takes 4: the driver refuses the fifth."""
    mod = load(payload("cl", [("vadd", [HANDLE, HANDLE, HANDLE, INT32, INT32],
                               ["blockIdx.x", "threadIdx.x"])], VADD))
    c = nd.empty((4,), "float32", mr.opencl(0))
    with pytest.raises(RuntimeError, match="kernel 'vadd': setting argument 4 failed"):
        mod["vadd"](c, c, c, 4, 0, 1, 4)
