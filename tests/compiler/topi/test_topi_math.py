"""Elementwise math operators against numpy (float32, rtol 1e-5 unless stated), many outputs
built as one kernel per target."""
import math

import numpy as np

from compiler import te, topi


def test_unary_math(run, rng):
    x = te.placeholder((3, 37), name="x")
    a = (rng.random((3, 37), dtype="float32") * 4 - 2).astype("float32")
    a[0, :4] = [0.5, 1.5, -0.5, 2.5]  # halves: round goes to even
    ops = {
        "exp": (topi.exp(x), np.exp(a)),
        "sigmoid": (topi.sigmoid(x), 1 / (1 + np.exp(-a))),
        "tanh": (topi.tanh(x), np.tanh(a)),
        "erf": (topi.erf(x), np.vectorize(math.erf)(a)),
        "abs": (topi.abs(x), np.abs(a)),
        "negative": (topi.negative(x), -a),
        "floor": (topi.floor(x), np.floor(a)),
        "ceil": (topi.ceil(x), np.ceil(a)),
        "round": (topi.round(x), np.round(a)),
        "clip": (topi.clip(x, -0.5, 0.75), np.clip(a, -0.5, 0.75)),
        "sign": (topi.sign(x), np.sign(a)),
    }
    outs = [o for o, _ in ops.values()]
    s = topi.x86.schedule_injective(outs)
    got = run(s, [x], outs, [a])
    for (name, (_, ref)), g in zip(ops.items(), got):
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6, err_msg=name)


def test_unary_math_of_positive_inputs(run, rng):
    x = te.placeholder((5, 16), name="x")
    a = rng.random((5, 16), dtype="float32") * 3 + 0.1
    outs = [topi.log(x), topi.sqrt(x), topi.rsqrt(x)]
    got = run(topi.x86.schedule_injective(outs), [x], outs, [a])
    for g, ref in zip(got, [np.log(a), np.sqrt(a), 1 / np.sqrt(a)]):
        np.testing.assert_allclose(g, ref, rtol=1e-5)


def test_cast_and_elemwise_tags(run, rng):
    x = te.placeholder((4, 9), name="x")
    y = topi.cast(x, "int32")
    assert y.op.tag == topi.tag.ELEMWISE and topi.tag.is_injective(y.op.tag)
    a = (rng.random((4, 9), dtype="float32") * 20 - 10).astype("float32")
    (got,) = run(topi.x86.schedule_injective([y]), [x], [y], [a])
    np.testing.assert_array_equal(got, a.astype("int32"))
