"""Activations and normalisations against numpy (rtol 1e-5, 1e-4 where a reduction sums many
terms): relu, leaky_relu, prelu, gelu, softmax, log_softmax (every axis), batch_norm,
layer_norm, lrn."""
import math

import numpy as np
import pytest

import compiler
from compiler import te, topi


def test_activations(run, rng):
    x = te.placeholder((2, 3, 5), name="x")
    slope = te.placeholder((3,), name="slope")
    a = rng.random((2, 3, 5), dtype="float32") * 4 - 2
    sl = rng.random(3, dtype="float32")
    outs = [topi.nn.relu(x), topi.nn.leaky_relu(x, 0.1), topi.nn.prelu(x, slope, 1),
            topi.nn.gelu(x)]
    got = run(topi.x86.schedule_injective(outs), [x, slope], outs, [a, sl])
    erf = np.vectorize(math.erf)
    refs = [np.maximum(a, 0), np.where(a > 0, a, 0.1 * a),
            np.where(a > 0, a, sl[None, :, None] * a), a * 0.5 * (1 + erf(a / np.sqrt(2)))]
    for g, r in zip(got, refs):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def _softmax(a, axis):
    e = np.exp(a - a.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_any_axis(run, rng, axis):
    x = te.placeholder((3, 4, 10), name="x")
    a = rng.random((3, 4, 10), dtype="float32") * 5
    sm, lsm = topi.nn.softmax(x, axis), topi.nn.log_softmax(x, axis)
    got = run(topi.x86.schedule_softmax([sm, lsm]), [x], [sm, lsm], [a])
    np.testing.assert_allclose(got[0], _softmax(a, axis), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.log(_softmax(a, axis)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 4, 64), (3, 13), (5, 40), (3, 197)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_in_vector_lanes(run, rng, shape, log):
    """One softmax over the innermost axis: max and sum in vector lanes, the row vectorized
    (widths 64, 13 and 40: 8, 1 and 8 lanes of partial results; 197, a prime: 8 lanes and
    vectors of 16 over 192, the 5 left in a tail loop); large logits."""
    x = te.placeholder(shape, name="x")
    a = rng.standard_normal(shape, dtype="float32") * 30
    y = topi.nn.log_softmax(x) if log else topi.nn.softmax(x)
    (got,) = run(topi.x86.schedule_softmax([y]), [x], [y], [a])
    want = _softmax(a.astype("float64"), -1)
    if log:
        np.testing.assert_allclose(got, np.log(want), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_softmax_row_of_prime_width_is_vectorized():
    x = te.placeholder((4, 197), name="x")
    y = topi.nn.softmax(x)
    text = str(compiler.lower(topi.x86.schedule_softmax([y]), [x, y], simple_mode=True))
    assert "ramp(" in text and "broadcast(" in text and "range(12)" in text   # 12 x 16 + 5


def test_batch_norm_layer_norm_lrn(run, rng):
    x = te.placeholder((2, 4, 3, 5), name="x")
    g, b, m, v = (te.placeholder((4,), name=n) for n in "gbmv")
    lg, lb = te.placeholder((3, 5), name="lg"), te.placeholder((3, 5), name="lb")
    a = rng.random((2, 4, 3, 5), dtype="float32")
    ga, ba, ma, va = (rng.random(4, dtype="float32") + 0.1 for _ in range(4))
    lga, lba = rng.random((3, 5), dtype="float32"), rng.random((3, 5), dtype="float32")
    bn = topi.nn.batch_norm(x, g, b, m, v, axis=1, epsilon=1e-3)[0]
    ln = topi.nn.layer_norm(x, lg, lb, axis=[2, 3], epsilon=1e-5)
    lrn = topi.nn.lrn(x, 3, 1, 0.001, 0.75, 2.0)
    outs = [bn, ln, lrn]
    got = run(topi.x86.schedule_reduce(outs), [x, g, b, m, v, lg, lb], outs,
              [a, ga, ba, ma, va, lga, lba])
    c = (slice(None),) + (None,) * 2
    ref_bn = (a - ma[c]) / np.sqrt(va[c] + 1e-3) * ga[c] + ba[c]
    mu, var = a.mean((2, 3), keepdims=True), a.var((2, 3), keepdims=True)
    ref_ln = (a - mu) / np.sqrt(var + 1e-5) * lga + lba
    sq = np.pad(a * a, ((0, 0), (1, 1), (0, 0), (0, 0)))
    win = sq[:, 0:4] + sq[:, 1:5] + sq[:, 2:6]
    ref_lrn = a / (2.0 + 0.001 / 3 * win) ** 0.75
    np.testing.assert_allclose(got[0], ref_bn, rtol=1e-5)
    np.testing.assert_allclose(got[1], ref_ln, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], ref_lrn, rtol=1e-5)
