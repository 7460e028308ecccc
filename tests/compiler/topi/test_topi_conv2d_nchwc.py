"""Convolutions and pools in the blocked layout NCHW[x]c against the float64 numpy references
of the NCHW operators (rtol 1e-4), the operands blocked by layout_transform's numpy twin:
conv2d_NCHWc (3x3, 1x1, stride 2, padding, channel blocks that are not the vector width, tiles
that are explicit or chosen, bands and rows, short tail tiles, passes over the input channels,
the epilogue bias + residual + relu fused), grouped (groups of whole blocks, and groups
narrower than a block), depthwise,
pools, and the te layout transform itself."""
import numpy as np
import pytest
from topi_refs import conv2d_ref, pool2d_ref

from compiler import lower, te, topi
from compiler.ir.errors import IRError
from compiler.topi.nn.layout import transform_numpy, transform_shape
from compiler.topi.x86.conv2d_nchwc import (
    band_rows_for,
    band_tile_shape,
    channel_chunk_for,
    conv_tiling,
    depthwise_band_rows,
    tile_shape,
)

TOL = dict(rtol=1e-4, atol=1e-5)


def _blocked(a, block):
    return transform_numpy(a, "NCHW", f"NCHW{block}c")


@pytest.mark.parametrize("case", [
    dict(c=3, k=16, hw=(9, 8), ks=3, stride=2, pad=1, ib=3, ob=8),       # a network's stem
    dict(c=12, k=20, hw=(6, 5), ks=3, stride=1, pad=(1, 0, 2, 1), ib=4, ob=4),
    dict(c=16, k=32, hw=(9, 14), ks=1, stride=2, pad=0, ib=8, ob=8,      # 1x1 projection
         tile=dict(oc_blocks=2, ow_tile=7)),
    dict(c=6, k=10, hw=(8, 6), ks=5, stride=1, pad=2, ib=6, ob=5, tile=dict(oc_blocks=1,
                                                                             ow_tile=3)),
    # bands: 4 x 3 tiles over 9 x 10 pixels (a short tail tile), bands of 3 rows, passes of 2
    # input-channel blocks; the same unrolled; rows forced for a 3x3 kernel
    dict(c=32, k=32, hw=(9, 10), ks=3, stride=1, pad=1, ib=8, ob=8,
         tile=dict(band_rows=3, channel_chunk=2)),
    dict(c=16, k=16, hw=(7, 7), ks=3, stride=2, pad=1, ib=8, ob=4,
         tile=dict(oc_blocks=2, ow_tile=5, band_rows=2, unroll_channels=True)),
    dict(c=8, k=16, hw=(6, 8), ks=3, stride=1, pad=1, ib=8, ob=8, tile=dict(band_rows=0)),
    dict(c=64, k=32, hw=(7, 7), ks=1, stride=1, pad=0, ib=8, ob=8),      # 1x1 in bands
    dict(c=16, k=32, hw=(7, 7), ks=3, stride=1, pad=1, ib=8, ob=8,
         tile=dict(oc_blocks=2, ow_tile=7, band_rows=7)),                # a tile per row
    dict(c=64, k=16, hw=(5, 6), ks=1, stride=1, pad=0, ib=8, ob=8,       # 1x1 rows in passes
         tile=dict(band_rows=0, channel_chunk=2)),
], ids=["stem-stride2", "odd-blocks-asym-pad", "1x1-stride2-tile", "5x5-odd", "band-passes",
        "band-tail-unrolled", "rows-3x3", "1x1-band", "band-even-tile", "1x1-row-passes"])
def test_conv2d_nchwc_epilogue(run, rng, case):
    """conv + bias + residual + relu, one kernel; the result compared in NCHW."""
    c, k, (h, w), ks, ib, ob = case["c"], case["k"], case["hw"], case["ks"], case["ib"], case["ob"]
    a = rng.random((1, c, h, w), dtype="float32") - 0.5
    wa = rng.random((k, c, ks, ks), dtype="float32") - 0.5
    bias = rng.random((1, k, 1, 1), dtype="float32") - 0.5
    ref = conv2d_ref(a, wa, case["stride"], topi.nn.get_pad_tuple(case["pad"], (ks, ks)), 1)
    res = rng.random(ref.shape, dtype="float32") - 0.5
    ref = np.maximum(ref + bias + res, 0)
    x = te.placeholder((1, c // ib, h, w, ib), name="x")
    wt = te.placeholder((k // ob, c // ib, ks, ks, ib, ob), name="w")
    b = te.placeholder((1, k // ob, 1, 1, ob), name="b")
    r = te.placeholder(transform_shape(ref.shape, "NCHW", f"NCHW{ob}c"), name="r")
    y = topi.nn.conv2d_NCHWc(x, wt, case["stride"], case["pad"], 1)
    y = topi.nn.relu(topi.add(topi.add(y, b), r))
    s = topi.x86.schedule_conv2d_NCHWc([y], **case.get("tile", {}))
    (got,) = run(s, [x, wt, b, r], [y], [_blocked(a, ib),
                                         transform_numpy(wa, "OIHW", f"OIHW{ib}i{ob}o"),
                                         _blocked(bias, ob), _blocked(res, ob)])
    np.testing.assert_allclose(transform_numpy(got, f"NCHW{ob}c", "NCHW"), ref, **TOL)


@pytest.mark.parametrize("groups,ob,tile", [(2, 8, {}), (4, 4, {}),
                                             (2, 4, dict(oc_blocks=2, band_rows=0)),
                                             (2, 8, dict(band_rows=3, channel_chunk=1))],
                         ids=["2-groups", "4-groups-one-block-each", "rows", "band-passes"])
def test_grouped_conv2d_nchwc(run, rng, groups, ob, tile):
    """A grouped convolution of whole blocks (32 channels in groups of 16 or 8, blocks of 8
    in): each output block reads its group's input blocks; register tiles within a group."""
    a = rng.random((1, 32, 9, 10), dtype="float32") - 0.5
    wa = rng.random((32, 32 // groups, 3, 3), dtype="float32") - 0.5
    x = te.placeholder((1, 4, 9, 10, 8), name="x")
    wt = te.placeholder((32 // ob, 32 // groups // 8, 3, 3, 8, ob), name="w")
    y = topi.nn.relu(topi.nn.conv2d_NCHWc(x, wt, 1, 1, 1, groups=groups))
    s = topi.x86.schedule_conv2d_NCHWc([y], **tile)
    (got,) = run(s, [x, wt], [y], [_blocked(a, 8), transform_numpy(wa, "OIHW", f"OIHW8i{ob}o")])
    ref = np.maximum(conv2d_ref(a, wa, 1, (1, 1, 1, 1), 1, groups=groups), 0)
    np.testing.assert_allclose(transform_numpy(got, f"NCHW{ob}c", "NCHW"), ref, **TOL)
    with pytest.raises(IRError, match="groups"):
        topi.nn.conv2d_NCHWc(x, wt, 1, 1, 1, groups=3)


@pytest.mark.parametrize("pad_bytes", [None, 2000], ids=["one-band", "bands"])
@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_nchwc(run, rng, stride, pad_bytes):
    """Bands of output rows, each padding its input rows (2000 bytes: the 416-byte padded
    rows of a block in bands of 2 output rows at stride 1, 1 at stride 2)."""
    a = rng.random((1, 16, 10, 11), dtype="float32") - 0.5
    wa = rng.random((16, 1, 3, 3), dtype="float32") - 0.5
    x = te.placeholder((1, 2, 10, 11, 8), name="x")
    wt = te.placeholder((2, 1, 3, 3, 1, 8), name="w")
    y = topi.nn.relu(topi.nn.depthwise_conv2d_NCHWc(x, wt, stride, 1, 1))
    s = topi.x86.schedule_depthwise_conv2d_NCHWc(
        [y], **({"depthwise_pad_bytes": pad_bytes} if pad_bytes else {}))
    (got,) = run(s, [x, wt], [y], [_blocked(a, 8), transform_numpy(wa, "OIHW", "OIHW1i8o")])
    ref = np.maximum(conv2d_ref(a, wa, stride, (1, 1, 1, 1), 1, groups=16), 0)
    np.testing.assert_allclose(transform_numpy(got, "NCHW8c", "NCHW"), ref, **TOL)


@pytest.mark.parametrize("pad_bytes", [None, 6000], ids=["one-band", "bands"])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("per_group", [2, 4])
def test_grouped_within_blocks_nchwc(run, rng, per_group, stride, pad_bytes):
    """Groups narrower than a block (kernel OIHW[g]i[c]o): at stride 1 the input arranged by
    groups once per band (a stage of its own), at stride 2 arranged at each read; both are
    vector code (no scalar gather), and match the grouped NCHW reference."""
    a = rng.random((1, 16, 10, 11), dtype="float32") - 0.5
    wa = rng.random((16, per_group, 3, 3), dtype="float32") - 0.5
    x = te.placeholder((1, 2, 10, 11, 8), name="x")
    wt = te.placeholder((2, 1, 3, 3, per_group, 8), name="w")
    y = topi.nn.relu(topi.nn.depthwise_conv2d_NCHWc(x, wt, stride, 1, 1))
    s = topi.x86.schedule_depthwise_conv2d_NCHWc(
        [y], **({"depthwise_pad_bytes": pad_bytes} if pad_bytes else {}))
    lowered = str(lower(s, [x, wt, y], simple_mode=True))
    assert ("grouped_input" in lowered) == (stride == 1)
    assert "for ki" not in lowered   # every lane loop vectorized
    (got,) = run(s, [x, wt], [y], [_blocked(a, 8),
                                   transform_numpy(wa, "OIHW", f"OIHW{per_group}i8o")])
    ref = np.maximum(conv2d_ref(a, wa, stride, (1, 1, 1, 1), 1, groups=16 // per_group), 0)
    np.testing.assert_allclose(transform_numpy(got, "NCHW8c", "NCHW"), ref, **TOL)
    with pytest.raises(IRError, match="dividing"):
        topi.nn.depthwise_conv2d_NCHWc(x, te.placeholder((2, 1, 3, 3, 3, 8), name="w3"),
                                       1, 1, 1)


def test_conv2d_alone_no_epilogue(run, rng):
    a = rng.random((1, 8, 6, 6), dtype="float32")
    wa = rng.random((8, 8, 3, 3), dtype="float32")
    x = te.placeholder((1, 2, 6, 6, 4), name="x")
    wt = te.placeholder((1, 2, 3, 3, 4, 8), name="w")
    y = topi.nn.conv2d_NCHWc(x, wt, 1, 0, 1)
    (got,) = run(topi.x86.schedule_conv2d_NCHWc([y]), [x, wt], [y],
                 [_blocked(a, 4), transform_numpy(wa, "OIHW", "OIHW4i8o")])
    np.testing.assert_allclose(transform_numpy(got, "NCHW8c", "NCHW"),
                               conv2d_ref(a, wa, 1, (0, 0, 0, 0), 1), **TOL)


def test_depthwise_band_rows():
    """The padded rows of a band of one channel block fit the bytes given: 128 KiB of 114-wide
    rows of 16 lanes (7296 bytes) are 17 rows, i.e. 8 output rows at stride 2 (a divisor of
    56) and 14 at stride 1 (a divisor of 112); at least one row."""
    assert depthwise_band_rows((1, 6, 56, 56, 16), (1, 6, 114, 114, 16), 3, 2, 4, 128 << 10) == 8
    assert depthwise_band_rows((1, 2, 112, 112, 16), (1, 2, 114, 114, 16), 3, 1, 4,
                               128 << 10) == 14
    assert depthwise_band_rows((1, 2, 112, 112, 16), (1, 2, 114, 114, 16), 3, 1, 4, 100) == 1


def test_conv2d_rows_prefetch_the_next_blocks_weights():
    """Row tiles read each group of channel blocks' weights while the group before it
    computes: the outer loop over (group, row) prefetches the weights of the group one on, as
    many iterations on as a group has rows (6; 3 groups of 2 blocks). Bands prefetch nothing
    (a call in their reduction loop keeps LLVM from holding the tile's sums in registers)."""
    x = te.placeholder((1, 4, 6, 6, 8), name="x")
    wt = te.placeholder((6, 4, 1, 1, 8, 8), name="w")
    y = topi.nn.conv2d_NCHWc(x, wt, 1, 0, 1)
    rows = str(lower(topi.x86.schedule_conv2d_NCHWc([y], oc_blocks=2, band_rows=0), [x, wt, y]))
    assert "tir.address_of(w[min(b.f.outer.fused.y.fused + 6, 17) // 6 * 512" in rows
    band = str(lower(topi.x86.schedule_conv2d_NCHWc([y], oc_blocks=2, band_rows=3), [x, wt, y]))
    assert "tir.prefetch" not in band


@pytest.mark.parametrize("kind,ceil,pad", [("max", False, 1), ("avg", True, 0),
                                           ("avg", False, 1)])
def test_pool_nchwc(run, rng, kind, ceil, pad):
    a = rng.random((1, 16, 9, 8), dtype="float32") - 0.5
    x = te.placeholder((1, 2, 9, 8, 8), name="x")
    y = topi.nn.pool2d_NCHWc(x, 3, 2, 1, pad, kind, ceil, count_include_pad=False)
    yn = topi.nn.pool2d(te.placeholder((1, 16, 9, 8), name="xn"), 3, 2, 1, pad, kind, ceil,
                        count_include_pad=False)
    assert tuple(int(d) for d in y.shape) == (1, 2) + tuple(int(d) for d in yn.shape[2:]) + (8,)
    (got,) = run(topi.x86.schedule_pool([y]), [x], [y], [_blocked(a, 8)])
    want = pool2d_ref(a, (3, 3), (2, 2), (1, 1), (pad,) * 4, kind, ceil, False)
    np.testing.assert_allclose(transform_numpy(got, "NCHW8c", "NCHW"), want, **TOL)


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_global_pool_nchwc(run, rng, kind):
    a = rng.random((1, 16, 5, 7), dtype="float32")
    x = te.placeholder((1, 4, 5, 7, 4), name="x")
    y = topi.nn.global_pool_NCHWc(x, kind)
    (got,) = run(topi.x86.schedule_adaptive_pool([y]), [x], [y], [_blocked(a, 4)])
    fn = np.mean if kind == "avg" else np.max
    np.testing.assert_allclose(transform_numpy(got, "NCHW4c", "NCHW"),
                               fn(a, axis=(2, 3), keepdims=True), **TOL)


@pytest.mark.parametrize("src,dst,shape", [("NCHW", "NCHW8c", (1, 16, 3, 5)),
                                           ("NCHW4c", "NCHW", (2, 3, 4, 2, 4)),
                                           ("OIHW", "OIHW4i8o", (16, 12, 3, 3))])
def test_layout_transform(run, rng, src, dst, shape):
    a = rng.random(shape, dtype="float32")
    x = te.placeholder(shape, name="x")
    y = topi.nn.layout_transform(x, src, dst)
    (got,) = run(topi.x86.schedule_injective([y]), [x], [y], [a])
    np.testing.assert_array_equal(got, transform_numpy(a, src, dst))
    np.testing.assert_array_equal(transform_numpy(got, dst, src), a)


def test_layout_errors():
    with pytest.raises(IRError, match="does not divide"):
        transform_shape((1, 12, 4, 4), "NCHW", "NCHW8c")
    with pytest.raises(IRError, match="same primal axes"):
        transform_shape((1, 12, 4, 4), "NCHW", "NCH8c")
    x = te.placeholder((1, 2, 4, 4, 8), name="x")
    w = te.placeholder((1, 4, 3, 3, 4, 8), name="w")
    with pytest.raises(IRError, match="channel blocks"):
        topi.nn.conv2d_NCHWc(x, w, 1, 1, 1)


def test_tile_shape_fits_registers():
    """The chosen tile divides the channel blocks and the width, and its accumulators, weight
    vectors and the broadcast fit the registers."""
    for ocb in (1, 2, 3, 8, 64):
        for ow in (1, 7, 14, 28, 56, 112, 9):
            ob, t = tile_shape(ocb, ow, 16)
            assert ocb % ob == 0 and ow % t == 0 and ob * t + ob + 1 <= 16
    # >= 8 accumulators, then the fewest loads per FMA: (ob + t) / (ob * t)
    assert tile_shape(8, 56, 16) == (2, 4)
    assert tile_shape(16, 28, 16) == (2, 4)
    assert tile_shape(32, 14, 16) == (4, 2)
    assert tile_shape(8, 7, 16) == (1, 7)          # 2 x 7 would need 17 registers
    assert tile_shape(1, 13, 16) == (1, 13)
    assert tile_shape(16, 28, 16, pointwise=True) == (4, 2)
    assert tile_shape(64, 7, 16, pointwise=True) == (1, 7)     # no 2-column tile: general
    assert tile_shape(64, 7, 32)[0] * 7 >= 14     # AVX-512: more accumulators


def test_band_tile_shape_fits_registers():
    """Accumulators, one broadcast per pixel and a weight vector fit the registers, at most 4
    pixels with several blocks; the most accumulators up to 3/4 of the registers, then the
    fewest loads per FMA."""
    for ocb in (1, 2, 3, 5, 6, 8, 64):
        for regs in (16, 32):
            ob, t = band_tile_shape(ocb, regs)
            assert ocb % ob == 0 and ob * t + t + 1 <= regs and ob * t <= regs * 3 // 4
            assert ob == 1 or t <= 4
    assert band_tile_shape(64, 16) == (4, 3)       # AVX2: 12 accumulators
    assert band_tile_shape(2, 16) == (2, 4)       # 2 x 5: measured slower
    assert band_tile_shape(6, 16) == (3, 3)
    assert band_tile_shape(1, 16) == (1, 7)
    assert band_tile_shape(64, 32) == (4, 4)       # AVX-512 / NEON: 16
    assert band_tile_shape(64, 16, max_accumulators=8) == (4, 2)
    assert band_tile_shape(64, 16, oc_blocks=2) == (2, 4)    # the pixels for those blocks
    assert band_tile_shape(64, 16, oc_blocks=1) == (1, 7)


def test_band_rows_and_passes():
    # accumulators of a band within 32 KB: 4 blocks x 8 lanes x 4 bytes per pixel
    assert band_rows_for(7, 7, 4, 8, 4) == 7
    assert band_rows_for(14, 14, 4, 8, 4) == 14
    assert band_rows_for(28, 28, 4, 8, 4) == 7     # 8 rows fit, 7 divides
    assert band_rows_for(56, 56, 4, 8, 4) == 4
    assert band_rows_for(5, 4000, 4, 8, 4) == 1
    # passes of at least 64 reduction steps
    assert channel_chunk_for(64, 9, 8) == 1        # 3x3 on 8-channel blocks
    assert channel_chunk_for(32, 1, 8) == 8        # 1x1
    assert channel_chunk_for(3, 1, 8) == 3         # all of them
    assert channel_chunk_for(1, 49, 3) == 1


def test_bands_or_rows():
    """(band_rows, oc_blocks, ow_tile, channel_chunk) on AVX2 (16 registers, 8 lanes)."""
    def tiling(c, k, size, ks):
        return conv_tiling((1, k // 8, size, size, 8), (k // 8, c // 8, ks, ks, 8, 8), 4, 16)
    assert tiling(512, 512, 7, 3) == (7, 4, 3, 1)      # ResNet's last stage: one band
    assert tiling(64, 64, 56, 3) == (4, 4, 3, 1)
    assert tiling(16, 16, 28, 3) == (0, 2, 4, 2)       # a short reduction: rows
    assert tiling(512, 512, 14, 1)[0] == 14            # 1x1, 64 KB of tile weights: bands
    assert tiling(256, 256, 28, 1) == (0, 4, 2, 8)     # 1x1, 32 KB: rows, passes of 64
    assert tiling(256, 512, 7, 1)[0] == 7              # 1x1 with no row tile: bands
    assert conv_tiling((1, 8, 14, 14, 8), (8, 8, 3, 3, 8, 8), 4, 16, band_rows=0,
                       ow_tile=5) == (0, 4, 2, 8)      # rows: the width's divisors


def test_band_tile_divides_its_band():
    """AVX-512 (32 registers, 16 lanes): a tile that divides the band's pixels wins over a
    slightly larger one that leaves a tail; none such on AVX2 (4 x 3 stays)."""
    def tiling(c, k, size, regs, lanes):
        return conv_tiling((1, k // lanes, size, size, lanes),
                           (k // lanes, c // lanes, 3, 3, lanes, lanes), 4, regs)
    assert tiling(512, 512, 7, 32, 16) == (7, 2, 7, 1)     # 49 pixels: 2 x 7, not 4 x 4
    assert tiling(256, 256, 14, 32, 16) == (14, 2, 7, 1)   # 2 x 7 takes the whole height
    assert tiling(128, 128, 28, 32, 16) == (4, 4, 4, 1)    # 4 x 4 divides 4 rows of 28
    assert tiling(512, 512, 7, 16, 8) == (7, 4, 3, 1)      # AVX2: no even tile near 12
    assert conv_tiling((1, 32, 7, 7, 16), (32, 32, 3, 3, 16, 16), 4, 32,
                       ow_tile=4) == (7, 4, 4, 1)           # an explicit tile is kept


def test_pointwise_conv_of_one_column_runs_in_rows():
    """A 1x1 convolution with a 1 x 1 output (a squeeze-and-excitation layer) takes row tiles
    (band_rows 0), not a one-pixel band with a pass per channel chunk."""
    from compiler.topi.x86.conv2d_nchwc import conv_tiling
    band, ob, t, _ = conv_tiling((1, 9, 1, 1, 16), (9, 36, 1, 1, 16, 16), 4, 32)
    assert (band, t) == (0, 1) and 9 % ob == 0
    assert conv_tiling((1, 9, 14, 14, 8), (9, 72, 1, 1, 8, 8), 4, 16)[0] > 0   # AVX2: bands


def test_pointwise_conv_runs_in_rows_on_avx512():
    """AVX-512: a 1x1 convolution with a row tile runs in rows whatever its weights take (2 x 7
    at width 14, 115 against 101 GFLOP/s in bands at 512 -> 1024 channels), summed in passes
    of 64 input channels as a band's are."""
    assert conv_tiling((1, 64, 14, 14, 16), (64, 32, 1, 1, 16, 16), 4, 32) == (0, 2, 7, 4)
    assert conv_tiling((1, 32, 28, 28, 16), (32, 16, 1, 1, 16, 16), 4, 32) == (0, 4, 4, 4)
