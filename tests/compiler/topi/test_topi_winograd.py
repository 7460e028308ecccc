"""Winograd convolution F(m, 3) in the blocked layout (topi.nn.winograd and its x86 schedule)
against the float64 numpy reference of conv2d (rtol 1e-4): the transform matrices, tile sizes 2
and 4, outputs that the tiles do not divide, asymmetric padding, channel blocks that are not
the vector width, explicit register tiles, the stages per tile row, the epilogue bias + residual
+ relu fused; and the
error of F(2, 3) from a float64 convolution, bounded by that of a direct float32 one."""
import numpy as np
import pytest
from topi_refs import conv2d_ref

import compiler
from compiler import te, topi
from compiler.ir.errors import IRError
from compiler.topi.nn.layout import transform_numpy, transform_shape
from compiler.topi.nn.winograd import winograd_matrices, winograd_weight_transform
from compiler.topi.x86.conv2d_winograd import GEMM_CHANNEL_CHUNK, gemm_tile, runs_in_tile_rows

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
    dict(m=2, c=16, k=16, hw=(7, 7), pad=(1, 1, 1, 1), ib=8, ob=8, tile=dict(tile_rows=True)),
    dict(m=4, c=16, k=16, hw=(9, 10), pad=(1, 1, 1, 1), ib=8, ob=8, tile=dict(tile_rows=True)),
    dict(m=2, c=6, k=10, hw=(6, 5), pad=(1, 0, 2, 1), ib=3, ob=5,
         tile=dict(tile_rows=True, oc_blocks=2, tile_count=3)),
], ids=["f2-7x7", "f4-tails", "f2-odd-blocks-asym-pad", "f4-explicit-tile", "f2-rows",
        "f4-tails-rows", "f2-odd-blocks-rows-explicit-tile"])
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


def test_large_layers_run_in_tile_rows(run, rng):
    """A layer whose transformed input and product would take ROWS_MIN_BYTES at the root
    runs per tile row (one parallel loop over the rows, beside the pad's, instead of one per
    stage); the result is the same to the bit either way."""
    assert runs_in_tile_rows(16, 36 * 36, 80, 192, 4)         # Inception-v3 at 73 x 73
    assert not runs_in_tile_rows(16, 4 * 4, 512, 512, 4)      # ResNet at 7 x 7
    a = rng.random((1, 2, 30, 30, 8), dtype="float32") - 0.5
    u = winograd_weight_transform(rng.random((2, 2, 3, 3, 8, 8), dtype="float32") - 0.5, 2)
    x, wt = te.placeholder(a.shape, name="x"), te.placeholder(u.shape, name="w")
    y = topi.nn.relu(topi.nn.conv2d_winograd_NCHWc(x, wt, 2, (1, 1, 1, 1)))
    got = {}
    for rows in (True, False):
        s = topi.x86.schedule_conv2d_winograd_NCHWc([y], tile_rows=rows)
        text = str(compiler.lower(s, [x, wt, y], simple_mode=True))
        assert text.count("# parallel") == (2 if rows else 4), text
        (got[rows],) = run(s, [x, wt], [y], [a, u])
    np.testing.assert_array_equal(got[True], got[False])


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


def _direct_f32(a, w, chunk):
    """The 3x3 convolution (padding 1) in float32, each `chunk` input channels summed from zero
    then added: the rounding of a direct convolution done as ONNX Runtime does it."""
    _, c, h, wd = a.shape
    xp = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    total = np.zeros((w.shape[0], h, wd), np.float32)
    for c0 in range(0, c, chunk):
        acc = np.zeros_like(total)
        for ci in range(c0, c0 + chunk):
            for i in range(3):
                for j in range(3):
                    acc += w[:, ci, i, j][:, None, None] * xp[0, ci, i:i + h, j:j + wd][None]
        total += acc
    return total[None]


@pytest.mark.parametrize("m, bound", [(2, 1.0), (4, None)])
def test_winograd_error_from_float64(run, m, bound):
    """128 input channels at 14 x 14, weights of a trained net's scale (output ~N(0, 1)). The
    largest error of F(2, 3) from the float64 convolution is at most that of a direct float32
    convolution summed in chunks of 16 channels (1.6x it when the product ran one sum over
    all channels). F(4, 3) (which winograd_conv2d no longer picks) is shown over 4x it."""
    rng = np.random.default_rng(0)
    c, k, hw, ib = 128, 64, 14, 16
    a = rng.standard_normal((1, c, hw, hw), dtype="float32")
    wa = (rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype("float32")
    ref = conv2d_ref(a, wa, 1, (1, 1, 1, 1), 1)
    direct = float(np.abs(_direct_f32(a, wa, 16) - ref).max())
    u = winograd_weight_transform(transform_numpy(wa, "OIHW", f"OIHW{ib}i{ib}o"), m)
    x = te.placeholder((1, c // ib, hw, hw, ib), name="x")
    wt = te.placeholder(u.shape, name="w")
    y = topi.nn.conv2d_winograd_NCHWc(x, wt, m, (1, 1, 1, 1))
    s = topi.x86.schedule_conv2d_winograd_NCHWc([y])
    (got,) = run(s, [x, wt], [y], [transform_numpy(a, "NCHW", f"NCHW{ib}c"), u])
    err = float(np.abs(transform_numpy(got, f"NCHW{ib}c", "NCHW") - ref).max())
    assert GEMM_CHANNEL_CHUNK < c
    if bound is not None:
        assert err <= bound * direct, (err, direct)
    else:
        assert err > 4 * direct, (err, direct)
