"""Convolutions against a float64 numpy reference (rtol 1e-4): conv2d_nchw with strides,
padding forms, dilation, odd sizes; group, depthwise and transposed; x86 and generic
schedules."""
import numpy as np
import pytest
from topi_refs import conv2d_ref

from compiler import te, topi
from compiler.ir.errors import IRError


def _conv(run, rng, shape, wshape, stride, padding, dilation, groups=1, schedule=None):
    x = te.placeholder(shape, name="x")
    w = te.placeholder(wshape, name="w")
    a, wa = rng.random(shape, dtype="float32") - 0.5, rng.random(wshape, dtype="float32") - 0.5
    if groups == 1:
        y = topi.nn.conv2d_nchw(x, w, stride, padding, dilation)
    else:
        y = topi.nn.group_conv2d_nchw(x, w, stride, padding, dilation, groups)
    s = (schedule or topi.x86.schedule_conv2d_nchw)([y])
    (got,) = run(s, [x, w], [y], [a, wa])
    pads = topi.nn.get_pad_tuple(padding, wshape[2:])
    np.testing.assert_allclose(got, conv2d_ref(a, wa, stride, pads, dilation, groups),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [
    dict(shape=(1, 8, 12, 12), wshape=(16, 8, 3, 3), stride=1, padding=1, dilation=1),
    dict(shape=(2, 3, 11, 9), wshape=(5, 3, 3, 2), stride=2, padding=(1, 0, 2, 1),
         dilation=1),
    dict(shape=(1, 4, 10, 13), wshape=(6, 4, 3, 3), stride=(1, 2), padding=(2, 1),
         dilation=2),
    dict(shape=(1, 8, 7, 7), wshape=(12, 8, 1, 1), stride=1, padding=0, dilation=1),
], ids=["3x3", "stride2-asym-pad", "dilation", "1x1"])
def test_conv2d_nchw(run, rng, case):
    _conv(run, rng, **case)


def test_group_conv2d(run, rng):
    _conv(run, rng, (1, 6, 9, 9), (9, 2, 3, 3), 1, 1, 1, groups=3)


def test_generic_schedule(run, rng):
    _conv(run, rng, (1, 3, 6, 6), (4, 3, 3, 3), 2, 1, 1,
          schedule=topi.generic.schedule_conv2d_nchw)


@pytest.mark.parametrize("mult,stride", [(1, 1), (2, 2)])
def test_depthwise(run, rng, mult, stride):
    x = te.placeholder((1, 6, 10, 11), name="x")
    w = te.placeholder((6, mult, 3, 3), name="w")
    a, wa = rng.random((1, 6, 10, 11), dtype="float32"), rng.random((6, mult, 3, 3),
                                                                      dtype="float32")
    y = topi.nn.depthwise_conv2d_nchw(x, w, stride, 1, 1)
    (got,) = run(topi.x86.schedule_depthwise_conv2d_nchw([y]), [x, w], [y], [a, wa])
    # depthwise = grouped conv with C groups, filter [C * M, 1, kh, kw]
    ref = conv2d_ref(a, wa.reshape(6 * mult, 1, 3, 3), stride, (1, 1, 1, 1), 1, groups=6)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def _conv_transpose_ref(x, w, stride, pad, out_pad):
    n, c, h, wd = x.shape
    _, f, kh, kw = w.shape
    full = np.zeros((n, f, (h - 1) * stride + kh + out_pad, (wd - 1) * stride + kw + out_pad))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,cfyx->nfyx", x[:, :, i, j], w)
    return full[:, :, pad:full.shape[2] - pad, pad:full.shape[3] - pad]


@pytest.mark.parametrize("stride,pad,out_pad", [(1, 0, 0), (2, 1, 1)])
def test_conv2d_transpose(run, rng, stride, pad, out_pad):
    x = te.placeholder((1, 4, 5, 6), name="x")
    w = te.placeholder((4, 3, 3, 3), name="w")
    a, wa = rng.random((1, 4, 5, 6), dtype="float32"), rng.random((4, 3, 3, 3), dtype="float32")
    y = topi.nn.conv2d_transpose_nchw(x, w, stride, pad, "float32", out_pad)
    (got,) = run(topi.x86.schedule_conv2d_transpose_nchw([y]), [x, w], [y], [a, wa])
    ref = _conv_transpose_ref(a, wa, stride, pad, out_pad)
    if out_pad:  # output_padding adds rows/cols at the end that only the padding crops
        full = _conv_transpose_ref(a, wa, stride, 0, out_pad)
        ref = full[:, :, pad:pad + got.shape[2], pad:pad + got.shape[3]]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_wrong_groups_raise():
    x = te.placeholder((1, 6, 5, 5))
    with pytest.raises(IRError, match="groups=4 must divide"):
        topi.nn.group_conv2d_nchw(x, te.placeholder((8, 1, 3, 3)), 1, 1, 1, 4)
