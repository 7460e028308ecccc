"""topi.cuda schedules: each lowers with every store on a GPU thread, and runs on OpenCL
(PoCL) matching numpy (float32: rtol 1e-4, atol 1e-5; sums of many terms rtol 1e-4,
atol 1e-4)."""
import numpy as np
import pytest
from topi_gpu_harness import lower_bound, opencl_run
from topi_refs import conv2d_ref

import compiler
from compiler import te, tir, topi
from compiler.ir.errors import TargetError
from compiler.target import Target
from compiler.tir import stmt as S
from compiler.tir.functor import post_order_visit

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


def test_small_batch_dense_shares_one_row_of_partial_sums(rng):
    """Cross-thread reduction of a 1 x 1000 output with an epilogue: each block keeps only its
    threads' partial sums in shared memory (64 floats), not a row of the whole output."""
    a = te.placeholder((1, 256), name="a")
    w = te.placeholder((1000, 256), name="w")
    y = topi.nn.relu(topi.nn.dense(a, w))
    s = cu.schedule_dense([y])
    sizes = []
    post_order_visit(lower_bound(s, [a, w, y]).body, lambda n: sizes.append(
        (n.buffer.scope, n.buffer.shape[0].value)) if isinstance(n, S.Allocate) else None)
    assert ("shared", 64) in sizes and max(n for _, n in sizes) == 64
    x, wv = rng.standard_normal((1, 256)).astype("float32"), \
        rng.standard_normal((1000, 256)).astype("float32")
    _check(s, [a, w], [y], [x, wv], [np.maximum(x @ wv.T, 0)], atol=1e-4)


def test_dense_tiled_without_epilogue(rng):
    a = te.placeholder((64, 32), name="a")
    w = te.placeholder((64, 32), name="w")
    y = topi.nn.dense(a, w)
    x, wv = rng.standard_normal((64, 32)).astype("float32"), \
        rng.standard_normal((64, 32)).astype("float32")
    _check(cu.schedule_dense_large_batch([y]), [a, w], [y], [x, wv], [x @ wv.T], atol=1e-4)


# (8, 88, 7): a block of 11 channels (88's largest divisor <= 16) on 7 x 7 pixels is one thread
# per pixel computing all 11, within OpenCL's 256 threads per block
@pytest.mark.parametrize("c,f,size,stride,pad", [(16, 32, 14, 1, 1), (3, 8, 16, 2, 1),
                                                 (8, 4, 7, 1, 0), (8, 88, 7, 1, 1)])
def test_conv2d_nchw_relu(rng, c, f, size, stride, pad):
    x = te.placeholder((1, c, size, size), name="x")
    w = te.placeholder((f, c, 3, 3), name="w")
    y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, stride, pad, 1))
    xv = rng.standard_normal((1, c, size, size)).astype("float32")
    wv = rng.standard_normal((f, c, 3, 3)).astype("float32")
    want = np.maximum(conv2d_ref(xv, wv, stride, (pad,) * 4), 0).astype("float32")
    _check(cu.schedule_conv2d_nchw([y]), [x, w], [y], [xv, wv], [want], atol=1e-4)


def test_conv2d_nchw_symbolic_int64_batch(rng):
    """A batch that is a symbolic int64 dim (an ONNX model's) fuses into the int32 block index;
    the shared tiles' loads read the launch index widened."""
    n = tir.SizeVar("N", "int64")
    x = te.placeholder((n, 3, 16, 16), name="x")
    w = te.placeholder((8, 3, 3, 3), name="w")
    y = topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    s = cu.schedule_conv2d_nchw([y])
    lower_bound(s, [x, w, y])
    xv = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    wv = rng.standard_normal((8, 3, 3, 3)).astype("float32")
    got, = opencl_run(s, [x, w, y], [xv, wv, np.zeros((2, 8, 16, 16), "float32")])
    np.testing.assert_allclose(got, conv2d_ref(xv, wv, 1, (1,) * 4), rtol=RTOL, atol=1e-4)


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


def test_shared_tiles_are_loaded_per_reduction_step():
    """The tiled dense loads its shared tiles inside the reduction loop (barriers come with
    the device passes of build)."""
    a = te.placeholder((64, 64), name="a")
    w = te.placeholder((64, 64), name="w")
    y = topi.nn.dense(a, w)
    text = str(lower_bound(cu.schedule_dense_large_batch([y]), [a, w, y]))
    assert "a.shared" in text and "w.shared" in text
    assert text.count("thread_binding threadIdx.x") == 1   # the tile loads reuse the index


def test_tiled_dense_opencl_source_has_barriers():
    a = te.placeholder((64, 64), name="a")
    w = te.placeholder((64, 64), name="w")
    y = topi.nn.dense(a, w)
    s = cu.schedule_dense_large_batch([y])
    try:
        mod = compiler.build(s, [a, w, y], target=Target("opencl", host="llvm"), name="d")
    except TargetError as err:
        pytest.skip(f"OpenCL code generation is not available: {err}")
    src = "\n".join(m.get_source() for m in mod.imported_modules)
    assert "__local" in src and src.count("barrier(CLK_LOCAL_MEM_FENCE)") >= 2


def _staged(nested: bool, inner: int):
    """c = b + 1 over (blockIdx, threadIdx.x); b shared, computed at c's thread loop (nested)
    or at its block loop (a sibling), its own axis bound to threadIdx.x by `inner` threads."""
    a = te.placeholder((8, 32), name="a")
    b = te.compute((8, 32), lambda i, j: a[i, j] * 2.0, name="b")
    c = te.compute((8, 32), lambda i, j: b[i, j] + 1.0, name="c")
    s = te.create_schedule(c.op)
    i, j = s[c].op.axis
    jo, ji = s[c].split(j, factor=16)
    s[c].bind(i, te.thread_axis("blockIdx.x"))
    s[c].bind(ji, te.thread_axis("threadIdx.x"))
    s[b].set_scope("shared")
    s[b].compute_at(s[c], ji if nested else i)
    _, bi = s[b].split(s[b].op.axis[1], factor=inner)
    s[b].bind(bi, te.thread_axis("threadIdx.x"))
    return s, [a, c]


@pytest.mark.parametrize("nested,inner", [(True, 16), (True, 8), (False, 8)])
def test_same_tag_loops_share_one_index(rng, nested, inner):
    """A stage bound to threadIdx.x inside c's threadIdx.x loop reuses its index; fewer
    threads than the loop (or a sibling loop with fewer) run on the first threads."""
    s, args = _staged(nested, inner)
    text = str(lower_bound(s, args))
    assert text.count("thread_binding threadIdx.x") == (1 if nested else 2), text
    assert (f"< {inner}" in text) == (inner < 16), text
    x = rng.standard_normal((8, 32)).astype("float32")
    (got,) = opencl_run(s, args, [x, np.zeros((8, 32), "float32")])
    np.testing.assert_allclose(got, x * 2 + 1, rtol=RTOL, atol=ATOL)
