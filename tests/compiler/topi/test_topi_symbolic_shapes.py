"""Operators whose batch (and spatial, sequence) dims are symbolic: conv2d (plain, grouped,
depthwise, transposed), pool2d (max/avg, ceil_mode), global and adaptive pools, batch_matmul,
softmax, layer_norm, strided_slice and concatenate, each built ONCE with te size vars and run
at several sizes against numpy (float32, rtol 1e-4, atol 1e-5). Each is scheduled as the VM's
kernels are: the x86 schedule, or the generic one where the x86 schedule refuses symbolic
extents."""
import numpy as np
import pytest
from topi_refs import adaptive_pool_ref, conv2d_ref, pool2d_ref

import compiler
import microruntime
from compiler import te, topi
from compiler.ir.errors import CompilerError, IRError

RTOL, ATOL = 1e-4, 1e-5


def _build(outs, ins, x86_schedule):
    """One kernel over `ins` + `outs`: the x86 schedule, the generic one when it refuses."""
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    try:
        s = x86_schedule(outs)
        return compiler.build(s, list(ins) + outs, target="llvm", name="f"), outs
    except (IRError, CompilerError, TypeError, ValueError):
        s = topi.generic.default_schedule(outs)
        return compiler.build(s, list(ins) + outs, target="llvm", name="f"), outs


def _call(mod, arrays, out_shapes):
    nd = [microruntime.nd.array(a) for a in arrays]
    outs = [microruntime.nd.array(np.zeros(s, "float32")) for s in out_shapes]
    mod["f"](*nd, *outs)
    return [o.numpy() for o in outs]


def _vars(*names):
    return [te.size_var(n, "int64") for n in names]


@pytest.mark.parametrize("groups,stride,padding", [(1, 1, (1, 1, 1, 1)), (2, 2, (0, 1, 1, 0)),
                                                   (6, 1, (1, 1, 1, 1))])
def test_conv2d_symbolic_batch_and_plane(groups, stride, padding):
    """groups 1 (conv2d_nchw), 2 (grouped) and C (depthwise) with N, H, W symbolic."""
    n, h, w = _vars("n", "h", "w")
    c, f = 6, 6
    x = te.placeholder((n, c, h, w), name="x")
    k = te.placeholder((f, c // groups, 3, 3), name="k")
    if groups == 1:
        y = topi.nn.conv2d_nchw(x, k, stride, padding, 1)
        sched = topi.x86.schedule_conv2d_nchw
    else:
        y = topi.nn.group_conv2d_nchw(x, k, stride, padding, 1, groups)
        sched = topi.x86.schedule_group_conv2d_nchw
    relu = te.compute(y.shape, lambda *i: te.max(y(*i), 0.0), name="relu", tag="elemwise")
    mod, _ = _build(relu, [x, k], sched)
    rng = np.random.default_rng(groups)
    ka = rng.standard_normal((f, c // groups, 3, 3)).astype("float32")
    for shape in ((1, c, 5, 7), (3, c, 8, 8), (2, c, 3, 11)):
        xa = rng.standard_normal(shape).astype("float32")
        ref = np.maximum(conv2d_ref(xa, ka, stride, padding, 1, groups), 0)
        got, = _call(mod, [xa, ka], [ref.shape])
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)


def test_depthwise_conv2d_symbolic_batch():
    n, h, w = _vars("n", "h", "w")
    x = te.placeholder((n, 4, h, w), name="x")
    k = te.placeholder((4, 1, 3, 3), name="k")
    y = topi.nn.depthwise_conv2d_nchw(x, k, 1, 1, 1)
    mod, _ = _build(y, [x, k], topi.x86.schedule_depthwise_conv2d_nchw)
    rng = np.random.default_rng(1)
    ka = rng.standard_normal((4, 1, 3, 3)).astype("float32")
    for shape in ((1, 4, 6, 6), (5, 4, 4, 9)):
        xa = rng.standard_normal(shape).astype("float32")
        ref = conv2d_ref(xa, ka, 1, (1, 1, 1, 1), 1, 4)
        got, = _call(mod, [xa, ka], [ref.shape])
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)


def test_conv2d_transpose_symbolic_batch():
    n, = _vars("n")
    x = te.placeholder((n, 3, 5, 5), name="x")
    k = te.placeholder((3, 2, 3, 3), name="k")
    y = topi.nn.conv2d_transpose_nchw(x, k, (2, 2), (1, 1, 1, 1))
    mod, _ = _build(y, [x, k], topi.x86.schedule_conv2d_transpose_nchw)
    rng = np.random.default_rng(2)
    ka = rng.standard_normal((3, 2, 3, 3)).astype("float32")
    fixed = te.placeholder((1, 3, 5, 5), name="x")
    ref_y = topi.nn.conv2d_transpose_nchw(fixed, k, (2, 2), (1, 1, 1, 1))
    ref_mod, _ = _build(ref_y, [fixed, k], topi.x86.schedule_conv2d_transpose_nchw)
    for batch in (1, 3):
        xa = rng.standard_normal((batch, 3, 5, 5)).astype("float32")
        got, = _call(mod, [xa, ka], [(batch, 2, 9, 9)])
        for b in range(batch):   # each image as the static kernel computes it
            ref, = _call(ref_mod, [xa[b:b + 1], ka], [(1, 2, 9, 9)])
            np.testing.assert_allclose(got[b:b + 1], ref, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("pool_type,ceil_mode,count_include_pad",
                         [("max", False, True), ("max", True, True), ("avg", True, False),
                          ("avg", False, True)])
def test_pool2d_symbolic_batch_and_plane(pool_type, ceil_mode, count_include_pad):
    n, c, h, w = _vars("n", "c", "h", "w")
    x = te.placeholder((n, c, h, w), name="x")
    kernel, stride, dil, pads = (3, 3), (2, 2), (1, 1), (1, 0, 1, 1)
    y = topi.nn.pool2d(x, kernel, stride, dil, pads, pool_type, ceil_mode, "NCHW",
                       count_include_pad)
    mod, _ = _build(y, [x], topi.x86.schedule_pool)
    rng = np.random.default_rng(3)
    for shape in ((1, 2, 5, 6), (3, 1, 8, 8), (2, 3, 7, 4)):
        xa = rng.standard_normal(shape).astype("float32")
        ref = pool2d_ref(xa, kernel, stride, dil, pads, pool_type, ceil_mode, count_include_pad)
        got, = _call(mod, [xa], [ref.shape])
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_global_and_adaptive_pool_symbolic_plane(pool_type):
    n, h, w = _vars("n", "h", "w")
    x = te.placeholder((n, 3, h, w), name="x")
    outs = [topi.nn.global_pool(x, pool_type), topi.nn.adaptive_pool(x, (2, 3), pool_type)]
    mod, _ = _build(outs, [x], topi.x86.schedule_adaptive_pool)
    rng = np.random.default_rng(4)
    for shape in ((1, 3, 4, 5), (4, 3, 7, 10), (2, 3, 3, 3)):
        xa = rng.standard_normal(shape).astype("float32")
        refs = [adaptive_pool_ref(xa, (1, 1), pool_type), adaptive_pool_ref(xa, (2, 3), pool_type)]
        got = _call(mod, [xa], [r.shape for r in refs])
        for g, r in zip(got, refs):
            np.testing.assert_allclose(g, r, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("transpose_b", [True, False])
def test_batch_matmul_symbolic_batch_and_rows(transpose_b):
    """[B, S, 8] x [B, S, 8]^T and [B, S, S] x [B, S, 8] with B and S symbolic (attention)."""
    b, s = _vars("b", "s")
    a = te.placeholder((b, s, 8) if transpose_b else (b, s, s), name="a")
    bt = te.placeholder((b, s, 8), name="bt")
    y = topi.nn.batch_matmul(a, bt, transpose_b=transpose_b)
    mod, _ = _build(y, [a, bt], topi.x86.schedule_batch_matmul)
    rng = np.random.default_rng(5)
    for bs, ss in ((1, 1), (2, 5), (3, 17)):
        aa = rng.standard_normal((bs, ss, 8) if transpose_b else (bs, ss, ss)).astype("float32")
        ba = rng.standard_normal((bs, ss, 8)).astype("float32")
        ref = aa @ (ba.transpose(0, 2, 1) if transpose_b else ba)
        got, = _call(mod, [aa, ba], [ref.shape])
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)


def test_softmax_and_layer_norm_symbolic_length():
    """softmax over a symbolic last axis; layer_norm over a static one with symbolic rows, and
    over a symbolic one."""
    s, = _vars("s")
    x = te.placeholder((2, s, s), name="x")
    sm = topi.nn.softmax(x, -1)
    mod, _ = _build(sm, [x], topi.x86.schedule_softmax)
    h = te.placeholder((s, 16), name="h")
    g = te.placeholder((16,), name="g")
    beta = te.placeholder((16,), name="beta")
    ln = topi.nn.layer_norm(h, g, beta, [-1], 1e-5)
    ln_mod, _ = _build(ln, [h, g, beta], topi.x86.schedule_layer_norm)
    v = te.placeholder((3, s), name="v")
    gs = te.placeholder((s,), name="gs")
    ln_sym = topi.nn.layer_norm(v, gs, None, [1], 1e-5)
    ln_sym_mod, _ = _build(ln_sym, [v, gs], topi.x86.schedule_layer_norm)
    rng = np.random.default_rng(6)
    ga, ba = rng.standard_normal(16).astype("float32"), rng.standard_normal(16).astype("float32")

    def norm(a, axis=-1):
        return (a - a.mean(axis, keepdims=True)) / np.sqrt(a.var(axis, keepdims=True) + 1e-5)

    for ss in (1, 5, 17):
        xa = rng.standard_normal((2, ss, ss)).astype("float32")
        e = np.exp(xa - xa.max(-1, keepdims=True))
        got, = _call(mod, [xa], [xa.shape])
        np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=RTOL, atol=ATOL)
        ha = rng.standard_normal((ss, 16)).astype("float32")
        got, = _call(ln_mod, [ha, ga, ba], [ha.shape])
        np.testing.assert_allclose(got, norm(ha) * ga + ba, rtol=RTOL, atol=ATOL)
        va = rng.standard_normal((3, ss)).astype("float32") + 1.0
        gsa = rng.standard_normal(ss).astype("float32")
        got, = _call(ln_sym_mod, [va, gsa], [va.shape])
        np.testing.assert_allclose(got, norm(va) * gsa, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("begin,end,stride", [(1, 2 ** 62, 1), (-3, -1, 1), (0, 100, 2),
                                              (-1, -2 ** 62, -1), (5, 1, -2)])
def test_strided_slice_of_a_symbolic_dim(begin, end, stride):
    """numpy slicing rules (negative bounds from the end, clamping) on a symbolic axis."""
    n, = _vars("n")
    x = te.placeholder((2, n), name="x")
    y = topi.strided_slice(x, [begin], [end], [stride], axes=[1])
    mod, _ = _build(y, [x], topi.x86.schedule_injective)
    for size in (1, 4, 9):
        xa = np.arange(2 * size, dtype="float32").reshape(2, size)
        ref = xa[:, begin:end:stride]
        if ref.size == 0:
            continue
        got, = _call(mod, [xa], [ref.shape])
        np.testing.assert_array_equal(got, ref)


def test_concatenate_symbolic_sizes():
    n, m = _vars("n", "m")
    a = te.placeholder((n, 3), name="a")
    b = te.placeholder((m, 3), name="b")
    c = te.placeholder((2, 3), name="c")
    y = topi.concatenate([a, b, c], 0)
    mod, _ = _build(y, [a, b, c], topi.x86.schedule_injective)
    rng = np.random.default_rng(7)
    ca = rng.standard_normal((2, 3)).astype("float32")
    for rows in ((1, 1), (4, 2), (3, 7)):
        aa, ba = (rng.standard_normal((r, 3)).astype("float32") for r in rows)
        ref = np.concatenate([aa, ba, ca])
        got, = _call(mod, [aa, ba, ca], [ref.shape])
        np.testing.assert_array_equal(got, ref)
