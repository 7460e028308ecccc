"""3-d convolution and pooling (NCDHW) against float64 numpy references, built for each host
target ("c", "llvm"): conv3d_ncdhw with strides, asymmetric padding, dilation and groups under
the x86 schedule (also fused with a bias add and relu); pool3d (max / avg, ceil_mode,
count_include_pad, dilation) and adaptive_pool3d."""
import itertools

import numpy as np
import pytest
from topi_refs import conv3d_ref

from compiler import te, topi
from compiler.ir.errors import IRError


def pool3d_ref(x, kernel, stride, dilation, pads, pool_type, ceil_mode, count_include_pad):
    """Pooling by explicit windows (PyTorch's ceil_mode rule: the last window starts inside
    the input or the leading padding)."""
    n, c, *size = x.shape
    before, after = pads[:3], pads[3:]

    def out_size(i):
        span = size[i] + before[i] + after[i] - dilation[i] * (kernel[i] - 1) - 1
        o = (span + (stride[i] - 1 if ceil_mode else 0)) // stride[i] + 1
        if ceil_mode and (o - 1) * stride[i] >= size[i] + before[i]:
            o -= 1
        return o

    outs = [out_size(i) for i in range(3)]
    out = np.zeros((n, c, *outs))
    for o in itertools.product(*(range(v) for v in outs)):
        taps = [[o[i] * stride[i] - before[i] + t * dilation[i] for t in range(kernel[i])]
                for i in range(3)]
        inside = [p for p in itertools.product(*taps)
                  if all(0 <= p[i] < size[i] for i in range(3))]
        vals = np.array([x[(slice(None), slice(None)) + p] for p in inside], dtype="float64")
        if pool_type == "max":
            out[(slice(None), slice(None)) + o] = vals.max(axis=0)
            continue
        if count_include_pad:
            count = 1
            for i in range(3):
                count *= sum(1 for t in taps[i] if -before[i] <= t < size[i] + after[i])
        else:
            count = len(inside)
        out[(slice(None), slice(None)) + o] = vals.sum(axis=0) / count
    return out


def _conv(run, rng, shape, wshape, stride, padding, dilation, groups=1):
    x = te.placeholder(shape, name="x")
    w = te.placeholder(wshape, name="w")
    a = rng.random(shape, dtype="float32") - 0.5
    wa = rng.random(wshape, dtype="float32") - 0.5
    y = topi.nn.conv3d_ncdhw(x, w, stride, padding, dilation, groups)
    (got,) = run(topi.x86.schedule_conv3d_ncdhw([y]), [x, w], [y], [a, wa])
    s = (stride,) * 3 if isinstance(stride, int) else stride
    d = (dilation,) * 3 if isinstance(dilation, int) else dilation
    ref = conv3d_ref(a, wa, s, topi.nn.get_pad_tuple3d(padding), d, groups)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [
    dict(shape=(1, 4, 5, 8, 8), wshape=(8, 4, 3, 3, 3), stride=1, padding=1, dilation=1),
    dict(shape=(1, 3, 6, 11, 9), wshape=(5, 3, 3, 5, 5), stride=(1, 2, 2),
         padding=(1, 2, 2, 0, 1, 2), dilation=1),
    dict(shape=(2, 2, 7, 9, 10), wshape=(3, 2, 2, 3, 2), stride=(2, 1, 3), padding=(0, 1, 1),
         dilation=(2, 2, 1)),
    dict(shape=(1, 6, 4, 6, 6), wshape=(9, 2, 1, 3, 3), stride=1, padding=(0, 1, 1),
         dilation=1, groups=3),
    dict(shape=(1, 8, 3, 7, 7), wshape=(16, 8, 1, 1, 1), stride=(1, 2, 2), padding=0,
         dilation=1),
    # reductions longer than CONV3D_CHUNK_TERMS: partial sums per chunk of channels
    dict(shape=(1, 32, 3, 6, 10), wshape=(8, 32, 3, 3, 3), stride=1, padding=1, dilation=1),
    dict(shape=(1, 40, 3, 5, 7), wshape=(6, 20, 3, 3, 3), stride=(1, 2, 1), padding=1,
         dilation=1, groups=2),
], ids=["3x3x3", "stem-like-asym-pad", "dilation-strides", "groups", "1x1x1-stride2",
        "two-level", "two-level-groups"])
def test_conv3d_ncdhw(run, rng, case):
    _conv(run, rng, **case)


@pytest.mark.parametrize("channels", [3, 24])
def test_conv3d_fused_bias_relu(run, rng, channels):
    x = te.placeholder((1, channels, 4, 9, 9), name="x")
    w = te.placeholder((8, channels, 3, 3, 3), name="w")
    b = te.placeholder((8, 1, 1, 1), name="b")
    a = rng.random((1, channels, 4, 9, 9), dtype="float32") - 0.5
    wa = rng.random((8, channels, 3, 3, 3), dtype="float32") - 0.5
    ba = rng.random((8, 1, 1, 1), dtype="float32") - 0.5
    y = topi.nn.relu(topi.add(topi.nn.conv3d_ncdhw(x, w, 1, 1, 1), b))
    (got,) = run(topi.x86.schedule_conv3d_ncdhw([y]), [x, w, b], [y], [a, wa, ba])
    ref = np.maximum(conv3d_ref(a, wa, (1, 1, 1), (1,) * 6, (1, 1, 1)) + ba, 0)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_conv3d_errors():
    x = te.placeholder((1, 4, 5, 6, 6), name="x")
    with pytest.raises(IRError, match="groups=3 must divide"):
        topi.nn.conv3d_ncdhw(x, te.placeholder((6, 1, 3, 3, 3), name="w"), 1, 1, 1, 3)
    with pytest.raises(IRError, match="5-d"):
        topi.nn.conv3d_ncdhw(x, te.placeholder((6, 4, 3, 3), name="w"), 1, 1, 1)
    with pytest.raises(IRError, match="padding"):
        topi.nn.conv3d_ncdhw(x, te.placeholder((6, 4, 3, 3, 3), name="w"), 1, (1, 1), 1)


@pytest.mark.parametrize("pool_type,kernel,stride,dilation,pads,ceil_mode,include", [
    ("max", (2, 2, 2), (2, 2, 2), (1, 1, 1), (0,) * 6, False, False),
    ("max", (3, 3, 3), (1, 2, 2), (1, 1, 1), (1, 1, 1, 1, 1, 1), True, False),
    ("max", (2, 2, 2), (1, 1, 1), (2, 2, 1), (0,) * 6, False, False),
    ("avg", (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 0, 1, 1, 1, 0), True, False),
    ("avg", (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1, 1, 0, 1), False, True),
    ("avg", (2, 2, 2), (2, 2, 2), (2, 1, 2), (0,) * 6, True, True),
], ids=["max", "max-pad-ceil", "max-dilation", "avg-ceil", "avg-include-pad",
        "avg-dilation-ceil-include"])
def test_pool3d(run, rng, pool_type, kernel, stride, dilation, pads, ceil_mode, include):
    shape = (1, 3, 6, 7, 8)
    x = te.placeholder(shape, name="x")
    a = rng.random(shape, dtype="float32") - 0.5
    y = topi.nn.pool3d(x, kernel, stride, dilation, pads, pool_type, ceil_mode, "NCDHW",
                       count_include_pad=include)
    (got,) = run(topi.x86.schedule_pool([y]), [x], [y], [a])
    ref = pool3d_ref(a, kernel, stride, dilation, pads, pool_type, ceil_mode, include)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pool_type", ["avg", "max"])
@pytest.mark.parametrize("out", [(1, 1, 1), (2, 3, 2)])
def test_adaptive_pool3d(run, rng, pool_type, out):
    shape = (1, 4, 5, 7, 6)
    x = te.placeholder(shape, name="x")
    a = rng.random(shape, dtype="float32")
    y = topi.nn.adaptive_pool3d(x, out, pool_type)
    (got,) = run(topi.x86.schedule_adaptive_pool([y]), [x], [y], [a])
    ref = np.zeros((1, 4) + out)
    fn = np.mean if pool_type == "avg" else np.max
    for o in itertools.product(*(range(v) for v in out)):
        sl = tuple(slice((o[i] * shape[2 + i]) // out[i],
                         -(-((o[i] + 1) * shape[2 + i]) // out[i])) for i in range(3))
        ref[(slice(None), slice(None)) + o] = fn(a[(slice(None), slice(None)) + sl],
                                                 axis=(2, 3, 4))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_long_reductions_sum_in_two_levels():
    x = te.placeholder((1, 64, 3, 4, 4), name="x")
    y = topi.nn.conv3d_ncdhw(x, te.placeholder((8, 64, 3, 3, 3), name="w"), 1, 1, 1)
    (partial,) = [t.op for t in y.op.input_tensors if t.op.tag == "conv3d_ncdhw_partial"]
    # 64 channels x 27 taps in chunks of 8 channels (216 products each)
    assert tuple(int(d) for d in partial.output(0).shape)[-1] == 8
    short = topi.nn.conv3d_ncdhw(x, te.placeholder((8, 64, 1, 1, 1), name="w"), 1, 0, 1)
    assert all(t.op.tag != "conv3d_ncdhw_partial" for t in short.op.input_tensors)
