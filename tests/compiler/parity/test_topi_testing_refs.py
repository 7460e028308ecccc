"""`tvm.topi.testing` as classic tests use it: the per-target schedule dispatchers and the numpy
conv2d reference, checked against a direct loop and against topi's own conv2d built here."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, topi
from compiler.target import Target
from compiler.topi import testing as ttesting


def _direct_conv(a, w, stride, pad):
    n, c, h, wd = a.shape
    f, _, kh, kw = w.shape
    p = np.pad(a.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, f, oh, ow))
    for b in range(n):
        for o in range(f):
            for y in range(oh):
                for x in range(ow):
                    win = p[b, :, y * stride:y * stride + kh, x * stride:x * stride + kw]
                    out[b, o, y, x] = np.sum(win * w[o])
    return out


@pytest.mark.parametrize("stride,pad", [(1, 0), (2, 1), (1, 2)])
def test_conv2d_nchw_python_matches_a_direct_loop(stride, pad):
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 7, 6)).astype("float32")
    w = rng.random((4, 3, 3, 3)).astype("float32")
    got = ttesting.conv2d_nchw_python(a, w, stride, pad)
    np.testing.assert_allclose(got, _direct_conv(a, w, stride, pad), rtol=1e-5)
    nhwc = ttesting.conv2d_nhwc_python(a.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                                       stride, pad)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), got, rtol=1e-6)


def test_grouped_conv2d_nchw_python_is_per_group():
    rng = np.random.default_rng(1)
    a = rng.random((1, 4, 5, 5)).astype("float32")
    w = rng.random((6, 2, 3, 3)).astype("float32")
    got = ttesting.conv2d_nchw_python(a, w, 1, 1, groups=2)
    for g in range(2):
        np.testing.assert_allclose(
            got[:, 3 * g:3 * (g + 1)],
            _direct_conv(a[:, 2 * g:2 * (g + 1)], w[3 * g:3 * (g + 1)], 1, 1), rtol=1e-5)
    with pytest.raises(ValueError, match="do not match"):
        ttesting.conv2d_nchw_python(a, w, 1, 1, groups=3)


def test_dispatch_by_target_keys():
    assert ttesting.get_injective_schedule("llvm") is topi.x86.schedule_injective
    assert ttesting.get_broadcast_schedule(Target("cuda")) is topi.cuda.schedule_injective
    assert ttesting.get_reduce_schedule("llvm") is topi.x86.schedule_reduce
    assert ttesting.get_elemwise_schedule("metal") is ttesting.get_injective_schedule("metal")
    assert ttesting.dispatch("llvm", {"generic": 1}) == 1


def test_conv2d_implement_for_cpu_matches_the_reference(target):
    compute, schedule = ttesting.get_conv2d_nchw_implement("llvm")
    A = te.placeholder((1, 3, 9, 9), name="A")
    W = te.placeholder((4, 3, 3, 3), name="W")
    with Target(target):
        B = compute(A, W, 2, 1, 1, "float32")
        s = schedule([B])
    f = compiler.build(s, [A, W, B], target)
    rng = np.random.default_rng(2)
    a = rng.random((1, 3, 9, 9)).astype("float32")
    w = rng.random((4, 3, 3, 3)).astype("float32")
    b = runtime.nd.array(np.zeros((1, 4, 5, 5), "float32"))
    f(runtime.nd.array(a), runtime.nd.array(w), b)
    np.testing.assert_allclose(b.numpy(), ttesting.conv2d_nchw_python(a, w, 2, 1),
                               rtol=1e-4, atol=1e-5)


def test_softmax_and_batch_matmul_references():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], "float32")
    sm = ttesting.softmax_python(x)
    np.testing.assert_allclose(sm.sum(axis=1), [1, 1], rtol=1e-6)
    np.testing.assert_allclose(sm[1], [1 / 3] * 3, rtol=1e-6)
    a, b = np.ones((2, 3, 4), "float32"), np.ones((2, 5, 4), "float32")
    assert ttesting.batch_matmul(a, b).shape == (2, 3, 5)
    np.testing.assert_allclose(ttesting.batch_matmul(a, b), 4.0)
