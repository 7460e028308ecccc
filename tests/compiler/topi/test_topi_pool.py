"""pool2d (max/avg, padding, stride, dilation, ceil_mode, count_include_pad), global and
adaptive pools against numpy window references (rtol 1e-5)."""
import numpy as np
import pytest
from topi_refs import adaptive_pool_ref, pool2d_ref

from compiler import te, topi


@pytest.mark.parametrize("pool_type,ceil_mode,count_include_pad",
                         [("max", True, True), ("avg", False, True), ("avg", True, False)])
def test_pool2d(run, rng, pool_type, ceil_mode, count_include_pad):
    x = te.placeholder((1, 3, 10, 9), name="x")
    a = rng.random((1, 3, 10, 9), dtype="float32") - 0.5
    cases = [((3, 3), (2, 2), (1, 1), (1, 1, 1, 1)), ((2, 3), (2, 1), (1, 1), (0, 1, 1, 0)),
             ((3, 2), (1, 2), (2, 1), (1, 0, 0, 1))]
    outs = [topi.nn.pool2d(x, k, s, d, p, pool_type, ceil_mode, "NCHW", count_include_pad)
            for k, s, d, p in cases]
    got = run(topi.x86.schedule_pool(outs), [x], outs, [a])
    for (k, s, d, p), g in zip(cases, got):
        ref = pool2d_ref(a, k, s, d, p, pool_type, ceil_mode, count_include_pad)
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6, err_msg=str((k, s, d, p)))


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_global_and_adaptive_pool(run, rng, pool_type):
    x = te.placeholder((2, 3, 7, 10), name="x")
    a = rng.random((2, 3, 7, 10), dtype="float32")
    outs = [topi.nn.global_pool(x, pool_type), topi.nn.adaptive_pool(x, (3, 4), pool_type)]
    got = run(topi.x86.schedule_adaptive_pool(outs), [x], outs, [a])
    np.testing.assert_allclose(got[0], adaptive_pool_ref(a, (1, 1), pool_type), rtol=1e-5)
    np.testing.assert_allclose(got[1], adaptive_pool_ref(a, (3, 4), pool_type), rtol=1e-5)
