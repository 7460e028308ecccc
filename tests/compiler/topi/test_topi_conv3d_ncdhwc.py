"""conv3d_NCDHWc under its x86 schedule against the float64 numpy reference of the NCDHW
convolution (rtol 1e-4), the operands blocked by layout_transform's numpy twin: a 3-channel
stem (a block of 3, stride (1, 2, 2)), 3x3x3 with padding in bands with passes over the
input-channel blocks and a short tail tile, stride 2 with asymmetric padding, rows forced for
a 3x3x3 kernel, a 1x1x1 stride-2 projection in rows, all with bias + residual + relu fused;
the tiling the schedule chooses; a mismatched kernel is an error."""
import numpy as np
import pytest
from topi_refs import conv3d_ref

from compiler import te, topi
from compiler.ir.errors import IRError
from compiler.topi.nn.layout import transform_numpy, transform_shape
from compiler.topi.x86.conv3d_ncdhwc import conv3d_tiling

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [
    dict(c=3, k=16, dhw=(3, 9, 10), ks=(3, 5, 5), stride=(1, 2, 2), pad=(1, 2, 2), ib=3, ob=8),
    dict(c=16, k=16, dhw=(3, 5, 7), ks=(3, 3, 3), stride=1, pad=1, ib=8, ob=8,
         tile=dict(oc_blocks=2, ow_tile=4, band_rows=2, channel_chunk=1)),
    dict(c=12, k=20, dhw=(5, 6, 7), ks=(3, 3, 3), stride=2, pad=(1, 0, 1, 0, 1, 1), ib=4,
         ob=4),
    dict(c=8, k=16, dhw=(2, 4, 6), ks=(3, 3, 3), stride=1, pad=1, ib=8, ob=8,
         tile=dict(band_rows=0)),
    dict(c=16, k=32, dhw=(4, 6, 8), ks=(1, 1, 1), stride=2, pad=0, ib=8, ob=8),
], ids=["stem", "band-passes-tail", "stride2-asym-pad", "rows-3x3x3", "1x1x1-stride2"])
def test_conv3d_ncdhwc_epilogue(run, rng, case):
    """conv + bias + residual + relu, one kernel; the result compared in NCDHW."""
    c, k, ib, ob = case["c"], case["k"], case["ib"], case["ob"]
    a = rng.random((1, c, *case["dhw"]), dtype="float32") - 0.5
    wa = rng.random((k, c, *case["ks"]), dtype="float32") - 0.5
    bias = rng.random((1, k, 1, 1, 1), dtype="float32") - 0.5
    stride = case["stride"] if isinstance(case["stride"], tuple) else (case["stride"],) * 3
    ref = conv3d_ref(a, wa, stride, topi.nn.get_pad_tuple3d(case["pad"]), (1, 1, 1))
    res = rng.random(ref.shape, dtype="float32") - 0.5
    ref = np.maximum(ref + bias + res, 0)
    x = te.placeholder(transform_shape(a.shape, "NCDHW", f"NCDHW{ib}c"), name="x")
    wt = te.placeholder(transform_shape(wa.shape, "OIDHW", f"OIDHW{ib}i{ob}o"), name="w")
    b = te.placeholder((1, k // ob, 1, 1, 1, ob), name="b")
    r = te.placeholder(transform_shape(ref.shape, "NCDHW", f"NCDHW{ob}c"), name="r")
    y = topi.nn.conv3d_NCDHWc(x, wt, case["stride"], case["pad"], 1)
    y = topi.nn.relu(topi.add(topi.add(y, b), r))
    s = topi.x86.schedule_conv3d_NCDHWc([y], **case.get("tile", {}))
    blocked = [transform_numpy(a, "NCDHW", f"NCDHW{ib}c"),
               transform_numpy(wa, "OIDHW", f"OIDHW{ib}i{ob}o"),
               transform_numpy(bias, "NCDHW", f"NCDHW{ob}c"),
               transform_numpy(res, "NCDHW", f"NCDHW{ob}c")]
    (got,) = run(s, [x, wt, b, r], [y], blocked)
    np.testing.assert_allclose(transform_numpy(got, f"NCDHW{ob}c", "NCDHW"), ref, **TOL)


def test_conv3d_alone_no_epilogue(run, rng):
    a = rng.random((1, 8, 3, 4, 5), dtype="float32")
    wa = rng.random((8, 8, 2, 3, 3), dtype="float32")
    x = te.placeholder((1, 2, 3, 4, 5, 4), name="x")
    wt = te.placeholder((1, 2, 2, 3, 3, 4, 8), name="w")
    y = topi.nn.conv3d_NCDHWc(x, wt, 1, 0, 1)
    (got,) = run(topi.x86.schedule_conv3d_NCDHWc([y]), [x, wt], [y],
                 [transform_numpy(a, "NCDHW", "NCDHW4c"),
                  transform_numpy(wa, "OIDHW", "OIDHW4i8o")])
    ref = conv3d_ref(a, wa, (1, 1, 1), (0,) * 6, (1, 1, 1))
    np.testing.assert_allclose(transform_numpy(got, "NCDHW8c", "NCDHW"), ref, **TOL)


def test_tiling_of_video_resnet_layers():
    # (band_rows, oc_blocks, ow_tile, channel_chunk) with 32 vector registers of 16 lanes:
    # 3x3x3 layers in bands with passes of one 16-channel block (432 terms a pass), a 1x1x1
    # projection in rows
    assert conv3d_tiling((1, 4, 8, 56, 56, 16), (4, 4, 3, 3, 3, 16, 16), 4, 32) == (2, 4, 4, 1)
    assert conv3d_tiling((1, 32, 1, 7, 7, 16), (32, 32, 3, 3, 3, 16, 16), 4, 32) == \
        (7, 2, 7, 1)
    assert conv3d_tiling((1, 32, 1, 7, 7, 16), (32, 16, 1, 1, 1, 16, 16), 4, 32)[0] == 0


def test_mismatched_kernel_is_an_error():
    x = te.placeholder((1, 2, 3, 4, 5, 4), name="x")
    wt = te.placeholder((1, 3, 1, 1, 1, 4, 8), name="w")
    with pytest.raises(IRError, match="channel blocks"):
        topi.nn.conv3d_NCDHWc(x, wt, 1, 0, 1)
