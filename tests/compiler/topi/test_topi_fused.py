"""Fused groups, each built as ONE kernel by the anchor's x86 schedule and checked against
numpy (rtol 1e-4): the elementwise stages after the anchor run inside its tile loop (the
anchor's result is never stored whole), injective stages before it are inlined or, for a
pad, computed once."""
import re

import numpy as np
from topi_refs import conv2d_ref

import compiler
from compiler import te, topi


def _allocations(s, args):
    """{buffer name: element count} of the allocations in the lowered function."""
    text = str(compiler.lower(s, args, name="f"))
    out = {}
    for name, dims in re.findall(r"(\S+) = allocate\(\[([0-9, ]+)\]", text):
        out[name] = int(np.prod([int(d) for d in dims.split(",")]))
    return out


def _chw(v):
    return v[:, None, None]


def test_conv2d_bias_relu(run, rng):
    x = te.placeholder((1, 8, 10, 10), name="x")
    w = te.placeholder((16, 8, 3, 3), name="w")
    b = te.placeholder((16, 1, 1), name="b")
    conv = topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    y = topi.nn.relu(topi.add(conv, b))
    s = topi.x86.schedule_conv2d_nchw([y])
    sizes = _allocations(s, [x, w, b, y])
    assert sizes["conv2d_nchw"] == 8 * 5  # one channel block x one vector of columns (10 = 2 x 5)
    a, wa, ba = (rng.random(sh, dtype="float32") - 0.5 for sh in ((1, 8, 10, 10),
                                                                   (16, 8, 3, 3), (16, 1, 1)))
    (got,) = run(s, [x, w, b], [y], [a, wa, ba])
    ref = np.maximum(conv2d_ref(a, wa, 1, (1, 1, 1, 1)) + ba, 0)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_dense_bias_relu(run, rng):
    x = te.placeholder((8, 24), name="x")
    w = te.placeholder((40, 24), name="w")
    b = te.placeholder((40,), name="b")
    a, wa, ba = (rng.random(sh, dtype="float32") - 0.5 for sh in ((8, 24), (40, 24), (40,)))
    for dense in (topi.nn.dense, topi.x86.dense_pack):
        y = topi.nn.relu(dense(x, w, b))
        s = topi.x86.schedule_dense([y])
        assert max(v for k, v in _allocations(s, [x, w, b, y]).items()
                   if k.startswith("T_dense")) < 8 * 40
        (got,) = run(s, [x, w, b], [y], [a, wa, ba])
        np.testing.assert_allclose(got, np.maximum(a @ wa.T + ba, 0), rtol=1e-4, atol=1e-6)


def test_conv2d_batchnorm_residual_relu(run, rng):
    x = te.placeholder((1, 4, 9, 12), name="x")
    w = te.placeholder((4, 4, 3, 3), name="w")
    scale = te.placeholder((4, 1, 1), name="scale")
    shift = te.placeholder((4, 1, 1), name="shift")
    conv = topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    y = topi.nn.relu(topi.add(topi.add(topi.multiply(conv, scale), shift), x))
    s = topi.x86.schedule_conv2d_nchw([y])
    assert _allocations(s, [x, w, scale, shift, y])["conv2d_nchw"] < 4 * 9 * 12
    a, wa, sc, sh = (rng.random(d, dtype="float32") - 0.5 for d in ((1, 4, 9, 12), (4, 4, 3, 3),
                                                                    (4, 1, 1), (4, 1, 1)))
    (got,) = run(s, [x, w, scale, shift], [y], [a, wa, sc, sh])
    ref = np.maximum(conv2d_ref(a, wa, 1, (1, 1, 1, 1)) * sc + sh + a, 0)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_conv2d_batch_norm_operator_fused(run, rng):
    x = te.placeholder((1, 3, 6, 6), name="x")
    w = te.placeholder((8, 3, 3, 3), name="w")
    g, b, m, v = (te.placeholder((8,), name=n) for n in "gbmv")
    conv = topi.nn.conv2d_nchw(x, w, 2, 1, 1)
    y = topi.nn.relu(topi.nn.batch_norm(conv, g, b, m, v)[0])
    s = topi.x86.schedule_conv2d_nchw([y])
    a, wa = rng.random((1, 3, 6, 6), dtype="float32"), rng.random((8, 3, 3, 3), dtype="float32")
    ga, ba, ma, va = (rng.random(8, dtype="float32") + 0.1 for _ in range(4))
    (got,) = run(s, [x, w, g, b, m, v], [y], [a, wa, ga, ba, ma, va])
    ref = (conv2d_ref(a, wa, 2, (1, 1, 1, 1)) - _chw(ma)) / np.sqrt(_chw(va) + 1e-5)
    np.testing.assert_allclose(got, np.maximum(ref * _chw(ga) + _chw(ba), 0), rtol=1e-4,
                               atol=1e-5)


def test_pad_then_conv2d(run, rng):
    x = te.placeholder((1, 2, 7, 7), name="x")
    w = te.placeholder((3, 2, 3, 3), name="w")
    t = topi.nn.relu(x)  # an injective producer: inlined into the pad
    p = topi.nn.pad(t, (0, 0, 2, 1), (0, 0, 0, 1))
    y = topi.nn.conv2d_nchw(p, w, 1, 0, 1)
    s = topi.x86.schedule_conv2d_nchw([y])
    assert s[t].attach_type == "inline" and s[p].attach_type == "root"
    a, wa = rng.random((1, 2, 7, 7), dtype="float32") - 0.5, rng.random((3, 2, 3, 3),
                                                                       dtype="float32")
    (got,) = run(s, [x, w], [y], [a, wa])
    np.testing.assert_allclose(got, conv2d_ref(np.maximum(a, 0), wa, 1, (2, 1, 0, 1)),
                               rtol=1e-4, atol=1e-5)


def test_injective_chain(run, rng):
    x = te.placeholder((2, 3, 4), name="x")
    y = te.placeholder((4,), name="y")
    t = topi.transpose(topi.multiply(topi.add(x, y), 2.0), (1, 0, 2))
    out = topi.reshape(topi.nn.relu(topi.subtract(t, 1.0)), (3, 8))
    s = topi.x86.schedule_fused([out])
    assert _allocations(s, [x, y, out]) == {}
    a, b = rng.random((2, 3, 4), dtype="float32"), rng.random(4, dtype="float32")
    (got,) = run(s, [x, y], [out], [a, b])
    ref = np.maximum(((a + b) * 2).transpose(1, 0, 2) - 1, 0).reshape(3, 8)
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_schedule_fused_picks_by_anchor(run, rng):
    x = te.placeholder((2, 3, 8, 8), name="x")
    y = topi.nn.relu(topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), 0, "avg"))
    s = topi.x86.schedule_fused([y])
    assert s[y].attach_type == "root" and \
        s[y.op.input_tensors[0].op.input_tensors[0]].attach_type == "scope"
    a = rng.random((2, 3, 8, 8), dtype="float32") - 0.5
    (got,) = run(s, [x], [y], [a])
    ref = np.maximum(a.reshape(2, 3, 4, 2, 4, 2).mean((3, 5)), 0)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
