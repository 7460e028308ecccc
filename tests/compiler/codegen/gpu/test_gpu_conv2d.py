"""conv2d (NCHW, stride 1, padding 1): the fused output axes split over blocks and threads,
the padded input inlined, the reduction serial in each thread."""
import numpy as np
from gpu_harness import metal_source, ptx_of, run_opencl

from compiler import te


def conv2d(n=1, c=3, h=10, w=9, k=4, r=3):
    X = te.placeholder((n, c, h, w), name="X")
    W = te.placeholder((k, c, r, r), name="W")
    P = te.compute((n, c, h + 2, w + 2), lambda b, ci, y, x: te.if_then_else(
        te.all(y >= 1, y <= h, x >= 1, x <= w), X[b, ci, y - 1, x - 1], 0.0), name="P")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, r), name="ry")
    rx = te.reduce_axis((0, r), name="rx")
    Y = te.compute((n, k, h, w), lambda b, f, y, x: te.sum(
        P[b, rc, y + ry, x + rx] * W[f, rc, ry, rx], axis=[rc, ry, rx]), name="Y")
    s = te.create_schedule(Y.op)
    s[P].compute_inline()
    fused = s[Y].fuse(*s[Y].op.axis)
    bx, tx = s[Y].split(fused, factor=32)
    s[Y].bind(bx, te.thread_axis("blockIdx.x"))
    s[Y].bind(tx, te.thread_axis("threadIdx.x"))
    return s, [X, W, Y]


def _reference(x, wt):
    n, c, h, w = x.shape
    k, _, r, _ = wt.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k, h, w), "float32")
    for dy in range(r):
        for dx in range(r):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, dy:dy + h, dx:dx + w], wt[:, :, dy, dx])
    return out


def test_conv2d_opencl_runs():
    s, args = conv2d()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 10, 9)).astype("float32")
    wt = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    _, _, y = run_opencl(s, args, [x, wt, np.zeros((1, 4, 10, 9), "float32")], name="conv")
    np.testing.assert_allclose(y, _reference(x, wt), rtol=1e-4, atol=1e-4)


def test_conv2d_cuda_compiles_to_ptx():
    assert ".visible .entry conv_kernel(" in ptx_of(*conv2d(), name="conv")


def test_conv2d_metal_structure():
    text = metal_source(*conv2d(), name="conv")
    assert "kernel void conv_kernel(" in text and "uint3 blockIdx" in text
