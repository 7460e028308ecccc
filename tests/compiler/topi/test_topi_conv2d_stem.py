"""Stem convolutions in NCHW[x]c (a kernel window over at most 4 input channels: the first
convolution of an image model) against the float64 numpy reference (rtol 1e-4): 3x3 stride 2
(pad 1) and 7x7 stride 2 (pad 3), 1-4 input channels, an odd output width, bias + relu fused;
and the stem's tiling: row tiles of one channel block by the widest run of columns, its sums
rounded as every row tile's (the same result to the bit)."""
import numpy as np
import pytest
from topi_refs import conv2d_ref

from compiler import te, topi
from compiler.topi.nn.layout import transform_numpy
from compiler.topi.x86.conv2d_nchwc import conv_tiling, is_stem

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("c,k,hw,ks,stride,pad,ob", [
    (3, 32, (20, 22), 3, 2, 1, 16),     # MnasNet / MobileNet / EfficientNet's stem
    (3, 64, (22, 18), 7, 2, 3, 16),     # ResNet's stem
    (1, 16, (13, 15), 3, 2, 1, 8),      # odd output width (7), one channel
    (2, 24, (9, 19), 3, 1, 1, 8),       # stride 1, odd width (19), 3 channel blocks
    (4, 16, (11, 13), 7, 2, 3, 16),     # odd output width (7)
], ids=["3x3s2", "7x7s2", "c1-odd", "c2-s1", "c4-7x7-odd"])
def test_stem_conv_bias_relu(run, rng, c, k, hw, ks, stride, pad, ob):
    h, w = hw
    a = rng.random((1, c, h, w), dtype="float32") - 0.5
    wa = rng.random((k, c, ks, ks), dtype="float32") - 0.5
    bias = rng.random((1, k, 1, 1), dtype="float32") - 0.5
    ref = conv2d_ref(a, wa, stride, (pad,) * 4, 1)
    ref = np.maximum(ref + bias, 0)
    x = te.placeholder((1, 1, h, w, c), name="x")
    wt = te.placeholder((k // ob, 1, ks, ks, c, ob), name="w")
    b = te.placeholder((1, k // ob, 1, 1, ob), name="b")
    y = topi.nn.relu(topi.add(topi.nn.conv2d_NCHWc(x, wt, stride, pad, 1), b))
    s = topi.x86.schedule_conv2d_NCHWc([y])
    (got,) = run(s, [x, wt, b], [y], [transform_numpy(a, "NCHW", f"NCHW{c}c"),
                                      transform_numpy(wa, "OIHW", f"OIHW{c}i{ob}o"),
                                      transform_numpy(bias, "NCHW", f"NCHW{ob}c")])
    np.testing.assert_allclose(transform_numpy(got, f"NCHW{ob}c", "NCHW"), ref, **TOL)


def test_is_stem():
    assert is_stem((2, 1, 3, 3, 3, 16))
    assert is_stem((4, 1, 7, 7, 3, 16))
    assert is_stem((2, 2, 3, 3, 2, 16))          # 4 channels in two blocks
    assert not is_stem((2, 1, 3, 3, 8, 16))      # 8 channels
    assert not is_stem((2, 1, 1, 1, 3, 16))      # no kernel window


def test_stem_tiling():
    """Rows of one channel block by the widest divisor of the width whose accumulators and
    kernel-row sums fit the registers (AVX-512: 1 x 14 at 112; AVX2: 1 x 7); explicit choices
    are kept; without `stem` the general tile (2 x 14 for 3 -> 32 on AVX-512)."""
    def tiling(k, ks, regs=32, lanes=16, ow=112, stem=True, **explicit):
        return conv_tiling((1, k // lanes, ow, ow, lanes), (k // lanes, 1, ks, ks, 3, lanes),
                           4, regs, stem=stem, **explicit)
    assert tiling(32, 3) == (0, 1, 14, 1)
    assert tiling(64, 7) == (0, 1, 14, 1)
    assert tiling(32, 3, regs=16, lanes=8) == (0, 1, 7, 1)
    assert tiling(32, 3, ow=113) == (0, 1, 1, 1)                 # a prime width
    assert tiling(32, 3, ow=75) == (0, 1, 5, 1)
    assert tiling(32, 3, max_accumulators=8) == (0, 1, 8, 1)
    assert tiling(64, 7, oc_blocks=2) == (0, 2, 7, 1)            # 2 x 7 x 2 + 3 <= 32
    assert tiling(64, 7, oc_blocks=2, ow_tile=4) == (0, 2, 4, 1)
    assert tiling(32, 3, band_rows=4)[0] == 4
    assert tiling(32, 3, stem=False) == (0, 2, 14, 1)


def test_stem_tile_rounds_as_other_tiles(rng):
    """The stem's tile sums in the same order as any other row tile: the result is the same
    to the bit (llvm)."""
    import compiler
    import microruntime
    from compiler.codegen import host_codegen_available
    if not host_codegen_available("llvm"):
        pytest.skip("llvm codegen is not available")
    x = te.placeholder((1, 1, 30, 30, 3), name="x")
    wt = te.placeholder((2, 1, 7, 7, 3, 16), name="w")
    y = topi.nn.relu(topi.nn.conv2d_NCHWc(x, wt, 2, 3, 1))
    arrays = [rng.random((1, 1, 30, 30, 3), dtype="float32") - 0.5,
              rng.random((2, 1, 7, 7, 3, 16), dtype="float32") - 0.5]
    outs = []
    for tile in ({}, dict(oc_blocks=2, ow_tile=5)):
        mod = compiler.build(topi.x86.schedule_conv2d_NCHWc([y], **tile), [x, wt, y],
                             target="llvm", name="f")
        nd = [microruntime.nd.array(a) for a in arrays + [np.zeros((1, 2, 15, 15, 16),
                                                                   "float32")]]
        mod["f"](*nd)
        outs.append(nd[2].numpy())
    assert np.array_equal(outs[0], outs[1])
