"""Winograd convolution F(m, 3) in the blocked layout (topi.nn.winograd and its x86 schedule)
against the float64 numpy reference of conv2d (rtol 1e-4): the transform matrices, tile sizes 2
and 4, outputs that the tiles do not divide, asymmetric padding, channel blocks that are not
the vector width, explicit register tiles, the epilogue bias + residual + relu fused."""
import numpy as np
import pytest
from topi_refs import conv2d_ref

from compiler import te, topi
from compiler.ir.errors import IRError
from compiler.topi.nn.layout import transform_numpy, transform_shape
from compiler.topi.nn.winograd import winograd_matrices, winograd_weight_transform
from compiler.topi.x86.conv2d_winograd import gemm_tile

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m", [2, 4])
def test_matrices_compute_a_correlation(m):
    at, g, bt = winograd_matrices(m)
    rng = np.random.default_rng(m)
    d, w = rng.random(m + 2), rng.random(3)
    want = np.array([d[k:k + 3] @ w for k in range(m)])
    np.testing.assert_allclose(at @ ((g @ w) * (bt @ d)), want, rtol=1e-12)


def test_unknown_tile_size():
    with pytest.raises(IRError, match="output tile 3 is not supported"):
        winograd_matrices(3)


@pytest.mark.parametrize("case", [
    dict(m=2, c=16, k=16, hw=(7, 7), pad=(1, 1, 1, 1), ib=8, ob=8),
    dict(m=4, c=16, k=16, hw=(9, 10), pad=(1, 1, 1, 1), ib=8, ob=8),     # 9 x 10: tails
    dict(m=2, c=6, k=10, hw=(6, 5), pad=(1, 0, 2, 1), ib=3, ob=5),       # odd blocks, pads
    dict(m=4, c=8, k=32, hw=(14, 14), pad=(1, 1, 1, 1), ib=8, ob=8,
         tile=dict(oc_blocks=2, tile_count=3)),
], ids=["f2-7x7", "f4-tails", "f2-odd-blocks-asym-pad", "f4-explicit-tile"])
def test_winograd_epilogue(run, rng, case):
    """conv + bias + residual + relu, one kernel; the result compared in NCHW."""
    m, c, k, (h, w), ib, ob = case["m"], case["c"], case["k"], case["hw"], case["ib"], case["ob"]
    a = rng.random((1, c, h, w), dtype="float32") - 0.5
    wa = rng.random((k, c, 3, 3), dtype="float32") - 0.5
    bias = rng.random((1, k, 1, 1), dtype="float32") - 0.5
    ref = conv2d_ref(a, wa, 1, case["pad"], 1)
    res = rng.random(ref.shape, dtype="float32") - 0.5
    ref = np.maximum(ref + bias + res, 0)
    u = winograd_weight_transform(transform_numpy(wa, "OIHW", f"OIHW{ib}i{ob}o"), m)
    x = te.placeholder((1, c // ib, h, w, ib), name="x")
    wt = te.placeholder(u.shape, name="w")
    b = te.placeholder((1, k // ob, 1, 1, ob), name="b")
    r = te.placeholder(transform_shape(ref.shape, "NCHW", f"NCHW{ob}c"), name="r")
    y = topi.nn.conv2d_winograd_NCHWc(x, wt, m, case["pad"])
    y = topi.nn.relu(topi.add(topi.add(y, b), r))
    s = topi.x86.schedule_conv2d_winograd_NCHWc([y], **case.get("tile", {}))
    (got,) = run(s, [x, wt, b, r], [y], [transform_numpy(a, "NCHW", f"NCHW{ib}c"), u,
                                         transform_numpy(bias, "NCHW", f"NCHW{ob}c"),
                                         transform_numpy(res, "NCHW", f"NCHW{ob}c")])
    np.testing.assert_allclose(transform_numpy(got, f"NCHW{ob}c", "NCHW"), ref, **TOL)


def test_winograd_alone(run, rng):
    """Without an epilogue the Winograd output stage is the kernel's output."""
    a = rng.random((1, 16, 8, 8), dtype="float32") - 0.5
    wa = rng.random((8, 16, 3, 3), dtype="float32") - 0.5
    x = te.placeholder((1, 2, 8, 8, 8), name="x")
    u = winograd_weight_transform(transform_numpy(wa, "OIHW", "OIHW8i8o"), 2)
    wt = te.placeholder(u.shape, name="w")
    y = topi.nn.conv2d_winograd_NCHWc(x, wt, 2, (1, 1, 1, 1))
    s = topi.x86.schedule_conv2d_winograd_NCHWc([y])
    (got,) = run(s, [x, wt], [y], [transform_numpy(a, "NCHW", "NCHW8c"), u])
    np.testing.assert_allclose(transform_numpy(got, "NCHW8c", "NCHW"),
                               conv2d_ref(a, wa, 1, (1, 1, 1, 1), 1), **TOL)


def test_mismatched_weight():
    x = te.placeholder((1, 2, 8, 8, 8), name="x")
    with pytest.raises(IRError, match="does not match F\\(4, 3\\)"):
        topi.nn.conv2d_winograd_NCHWc(x, te.placeholder((16, 1, 16, 8), name="w"), 4,
                                      (1, 1, 1, 1))
    with pytest.raises(IRError, match="only 3x3 has a transform"):
        winograd_weight_transform(np.zeros((1, 1, 5, 5, 8, 8), "float32"), 2)


def test_gemm_tile_fits_registers():
    for ocb, tiles, regs in ((4, 196, 32), (32, 16, 32), (8, 49, 16), (3, 7, 16), (1, 1, 16)):
        ob, t = gemm_tile(ocb, tiles, regs)
        assert ocb % ob == 0 and tiles % t == 0
        assert ob * t + t + 1 <= regs and ob * t <= regs * 3 // 4
    assert gemm_tile(4, 196, 32) == (4, 4)     # AVX-512: 16 accumulators, 8 loads
    assert gemm_tile(8, 49, 16) == (1, 7)      # no tile count of 2 or 3 divides 49
