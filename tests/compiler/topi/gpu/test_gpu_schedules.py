"""topi.cuda schedules: each lowers with every store on a GPU thread, and runs on OpenCL
(PoCL) matching numpy (float32: rtol 1e-4, atol 1e-5; sums of many terms rtol 1e-4,
atol 1e-4)."""
import numpy as np
import pytest
from gpu_harness import lower_bound, opencl_run
from topi_refs import conv2d_ref

from compiler import te, topi
from compiler.te.thread_scope import finish_thread_scopes  # noqa: F401 (the pass under test)

cu = topi.cuda
RTOL, ATOL = 1e-4, 1e-5


def _check(s, ins, outs, arrays, want, atol=ATOL):
    lower_bound(s, ins + outs)
    out_arrays = [np.zeros([int(d) for d in o.shape], o.dtype) for o in outs]
    got = opencl_run(s, ins + outs, arrays + out_arrays)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=atol)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(3, 5, 7), (1024,), (2, 300)])
def test_injective(rng, shape):
    a = te.placeholder(shape, name="a")
    b = te.placeholder(shape, name="b")
    y = topi.exp(topi.add(a, b))
    x, z = rng.standard_normal(shape).astype("float32") * .5, \
        rng.standard_normal(shape).astype("float32") * .5
    _check(cu.schedule_injective([y]), [a, b], [y], [x, z], [np.exp(x + z)])


@pytest.mark.parametrize("shape,axis", [((4, 1000), 1), ((4, 30), 1), ((300, 5), 0)])
def test_reduce_sum(rng, shape, axis):
    a = te.placeholder(shape, name="a")
    y = topi.sum(a, axis=axis)
    x = rng.standard_normal(shape).astype("float32")
    _check(cu.schedule_reduce([y]), [a], [y], [x], [x.sum(axis=axis)], atol=1e-4)


def test_reduce_max_then_elementwise(rng):
    a = te.placeholder((8, 512), name="a")
    y = topi.multiply(topi.max(a, axis=1), 2.0)
    x = rng.standard_normal((8, 512)).astype("float32")
    _check(cu.schedule_reduce([y]), [a], [y], [x], [x.max(axis=1) * 2])


@pytest.mark.parametrize("shape", [(4, 1000), (2, 10)])
def test_softmax(rng, shape):
    a = te.placeholder(shape, name="a")
    y = topi.nn.softmax(a)
    x = rng.standard_normal(shape).astype("float32")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    _check(cu.schedule_softmax([y]), [a], [y], [x], [e / e.sum(axis=1, keepdims=True)])


@pytest.mark.parametrize("m,n,k", [(128, 64, 256), (1, 10, 512), (48, 24, 40)])
def test_dense_relu(rng, m, n, k):
    a = te.placeholder((m, k), name="a")
    w = te.placeholder((n, k), name="w")
    y = topi.nn.relu(topi.nn.dense(a, w))
    x, wv = rng.standard_normal((m, k)).astype("float32"), \
        rng.standard_normal((n, k)).astype("float32")
    _check(cu.schedule_dense([y]), [a, w], [y], [x, wv], [np.maximum(x @ wv.T, 0)],
           atol=1e-4)


def test_dense_tiled_without_epilogue(rng):
    a = te.placeholder((64, 32), name="a")
    w = te.placeholder((64, 32), name="w")
    y = topi.nn.dense(a, w)
    x, wv = rng.standard_normal((64, 32)).astype("float32"), \
        rng.standard_normal((64, 32)).astype("float32")
    _check(cu.schedule_dense_large_batch([y]), [a, w], [y], [x, wv], [x @ wv.T], atol=1e-4)


@pytest.mark.parametrize("c,f,size,stride,pad", [(16, 32, 14, 1, 1), (3, 8, 16, 2, 1),
                                                 (8, 4, 7, 1, 0)])
def test_conv2d_nchw_relu(rng, c, f, size, stride, pad):
    x = te.placeholder((1, c, size, size), name="x")
    w = te.placeholder((f, c, 3, 3), name="w")
    y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, stride, pad, 1))
    xv = rng.standard_normal((1, c, size, size)).astype("float32")
    wv = rng.standard_normal((f, c, 3, 3)).astype("float32")
    want = np.maximum(conv2d_ref(xv, wv, stride, (pad,) * 4), 0).astype("float32")
    _check(cu.schedule_conv2d_nchw([y]), [x, w], [y], [xv, wv], [want], atol=1e-4)


def test_conv2d_nchw_alone(rng):
    x = te.placeholder((2, 4, 8, 8), name="x")
    w = te.placeholder((8, 4, 3, 3), name="w")
    y = topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    xv = rng.standard_normal((2, 4, 8, 8)).astype("float32")
    wv = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    _check(cu.schedule_conv2d_nchw([y]), [x, w], [y], [xv, wv],
           [conv2d_ref(xv, wv, 1, (1,) * 4)], atol=1e-4)


def test_depthwise_conv2d_nchw(rng):
    x = te.placeholder((1, 8, 12, 12), name="x")
    w = te.placeholder((8, 1, 3, 3), name="w")
    y = topi.nn.depthwise_conv2d_nchw(x, w, 1, 1, 1)
    xv = rng.standard_normal((1, 8, 12, 12)).astype("float32")
    wv = rng.standard_normal((8, 1, 3, 3)).astype("float32")
    _check(cu.schedule_depthwise_conv2d_nchw([y]), [x, w], [y], [xv, wv],
           [conv2d_ref(xv, wv, 1, (1,) * 4, groups=8)], atol=1e-4)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool(rng, kind):
    x = te.placeholder((2, 3, 8, 8), name="x")
    y = topi.nn.pool2d(x, [2, 2], [2, 2], [1, 1], [0, 0, 0, 0], kind)
    xv = rng.standard_normal((2, 3, 8, 8)).astype("float32")
    win = xv.reshape(2, 3, 4, 2, 4, 2)
    want = win.max(axis=(3, 5)) if kind == "max" else win.mean(axis=(3, 5))
    _check(cu.schedule_pool([y]), [x], [y], [xv], [want])


def test_global_pool(rng):
    x = te.placeholder((2, 16, 7, 7), name="x")
    y = topi.nn.global_pool(x, "avg", "NCHW")
    xv = rng.standard_normal((2, 16, 7, 7)).astype("float32")
    _check(cu.schedule_adaptive_pool([y]), [x], [y], [xv], [xv.mean(axis=(2, 3),
                                                                     keepdims=True)])


def test_shared_tiles_get_barriers():
    """The tiled dense loads shared tiles between two barriers inside its reduction loop."""
    a = te.placeholder((64, 64), name="a")
    w = te.placeholder((64, 64), name="w")
    y = topi.nn.dense(a, w)
    text = str(lower_bound(cu.schedule_dense_large_batch([y]), [a, w, y]))
    assert "a.shared" in text and "w.shared" in text
    assert text.count("tir.storage_sync('shared')") >= 2
