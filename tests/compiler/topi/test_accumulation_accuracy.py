"""Rounding of long float32 reductions on x86: the band tiles of conv2d_NCHWc, the register
tiles of dense (gemm.tile_gemm) and blocked sum pools add their reduction in chunks, each
summed from zero, so that no step rounds at the size of the whole sum. Each test compares the
largest error from a float64 result with that of one float32 running sum in the same order
(what the kernels did before), computed in numpy."""
import numpy as np
from topi_refs import conv2d_ref

from compiler import te, topi
from compiler.topi.nn.layout import transform_numpy
from compiler.topi.x86.conv2d_nchwc import conv_tiling


def _running_conv(a, w):
    """3x3 convolution, padding 1, as one float32 running sum over (channel, row, column)."""
    _, c, h, wd = a.shape
    xp = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((w.shape[0], h, wd), np.float32)
    for ci in range(c):
        for i in range(3):
            for j in range(3):
                acc += w[:, ci, i, j][:, None, None] * xp[0, ci, i:i + h, j:j + wd][None]
    return acc[None]


def test_conv2d_band_sums_in_chunks(run):
    rng = np.random.default_rng(0)
    c, k, hw, ib = 128, 32, 28, 16
    a = rng.standard_normal((1, c, hw, hw), dtype="float32")
    wa = (rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype("float32")
    x = te.placeholder((1, c // ib, hw, hw, ib), name="x")
    wt = te.placeholder((k // ib, c // ib, 3, 3, ib, ib), name="w")
    y = topi.nn.conv2d_NCHWc(x, wt, 1, 1, 1)
    band, *_ = conv_tiling((1, k // ib, hw, hw, ib), (k // ib, c // ib, 3, 3, ib, ib), 4, 32)
    assert band > 0                         # the band tiling, on any ISA's register count
    (got,) = run(topi.x86.schedule_conv2d_NCHWc([y]), [x, wt], [y],
                 [transform_numpy(a, "NCHW", f"NCHW{ib}c"),
                  transform_numpy(wa, "OIHW", f"OIHW{ib}i{ib}o")])
    ref = conv2d_ref(a, wa, 1, (1, 1, 1, 1), 1)
    err = np.abs(transform_numpy(got, f"NCHW{ib}c", "NCHW") - ref).max()
    running = np.abs(_running_conv(a, wa) - ref).max()
    assert err <= 0.6 * running, (err, running)


def test_dense_sums_in_chunks(run):
    rng = np.random.default_rng(1)
    m, n, kk = 4, 64, 2048
    a = rng.standard_normal((m, kk), dtype="float32")
    wa = (rng.standard_normal((n, kk)) / np.sqrt(kk)).astype("float32")
    x = te.placeholder((m, kk), name="x")
    w = te.placeholder((n, kk), name="w")
    y = topi.nn.dense(x, w)
    (got,) = run(topi.x86.schedule_dense([y]), [x, w], [y], [a, wa])
    ref = a.astype(np.float64) @ wa.T.astype(np.float64)
    acc = np.zeros((m, n), np.float32)
    for i in range(kk):
        acc += a[:, i:i + 1] * wa[:, i][None]
    err, running = np.abs(got - ref).max(), np.abs(acc - ref).max()
    assert err <= 0.6 * running, (err, running)


def test_global_average_pool_sums_by_rows(run):
    rng = np.random.default_rng(2)
    c, hw, cb = 64, 24, 16
    a = np.maximum(rng.standard_normal((1, c, hw, hw), dtype="float32"), 0) + 1
    x = te.placeholder((1, c // cb, hw, hw, cb), name="x")
    y = topi.nn.global_pool_NCHWc(x, "avg")
    (got,) = run(topi.x86.schedule_adaptive_pool([y]), [x], [y],
                 [transform_numpy(a, "NCHW", f"NCHW{cb}c")])
    ref = a.astype(np.float64).mean(axis=(2, 3), keepdims=True)
    acc = np.zeros((1, c), np.float32)
    for i in range(hw):
        for j in range(hw):
            acc += a[:, :, i, j]
    running = np.abs(acc[..., None, None] / np.float32(hw * hw) - ref).max()
    err = np.abs(transform_numpy(got, f"NCHW{cb}c", "NCHW") - ref).max()
    assert err <= 0.6 * running, (err, running)
