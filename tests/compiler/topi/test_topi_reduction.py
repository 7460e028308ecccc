"""Reductions over axes with keepdims, argmax/argmin (first index of ties), against numpy
(rtol 1e-5)."""
import numpy as np
import pytest

from compiler import te, topi


@pytest.mark.parametrize("axis,keepdims", [(1, False), ((0, 2), True)])
def test_reductions(run, rng, axis, keepdims):
    x = te.placeholder((3, 5, 7), name="x")
    a = rng.random((3, 5, 7), dtype="float32") + 0.5
    outs = [topi.sum(x, axis, keepdims), topi.mean(x, axis, keepdims),
            topi.max(x, axis, keepdims), topi.min(x, axis, keepdims),
            topi.prod(x, axis, keepdims)]
    refs = [np.sum, np.mean, np.max, np.min, np.prod]
    np_axis = tuple(axis) if isinstance(axis, tuple) else axis
    got = run(topi.x86.schedule_reduce(outs), [x], outs, [a])
    for f, g in zip(refs, got):
        np.testing.assert_allclose(g, f(a, axis=np_axis, keepdims=keepdims), rtol=1e-5,
                                   err_msg=f.__name__)


def test_argmax_argmin_first_index(run, rng):
    x = te.placeholder((4, 9), name="x")
    a = rng.integers(0, 4, (4, 9)).astype("float32")  # many ties
    outs = [topi.argmax(x, axis=1), topi.argmin(x, axis=0, keepdims=True), topi.argmax(x)]
    got = run(topi.x86.schedule_reduce(outs), [x], outs, [a])
    np.testing.assert_array_equal(got[0], np.argmax(a, axis=1))
    np.testing.assert_array_equal(got[1], np.argmin(a, axis=0)[None, :])
    np.testing.assert_array_equal(got[2], np.argmax(a))


def test_reduce_after_injective_input(run, rng):
    x = te.placeholder((6, 10), name="x")
    y = topi.sum(topi.exp(x), axis=1)
    a = rng.random((6, 10), dtype="float32")
    (got,) = run(topi.x86.schedule_reduce([y]), [x], [y], [a])
    np.testing.assert_allclose(got, np.exp(a).sum(1), rtol=1e-5)
