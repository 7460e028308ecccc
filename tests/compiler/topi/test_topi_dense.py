"""dense, matmul (transposes), dense_pack, batch_matmul against numpy (float32, rtol 1e-4),
with sizes that do not divide the register tile, x86 and generic schedules."""
import numpy as np
import pytest

from compiler import te, topi


@pytest.mark.parametrize("m,n,k", [(1, 10, 7), (37, 45, 19)])
def test_dense_with_bias(run, rng, m, n, k):
    x = te.placeholder((m, k), name="x")
    w = te.placeholder((n, k), name="w")
    b = te.placeholder((n,), name="b")
    a, wa, ba = (rng.random(s, dtype="float32") for s in ((m, k), (n, k), (n,)))
    y = topi.nn.dense(x, w, b)
    p = topi.x86.dense_pack(x, w, b)
    (got,) = run(topi.x86.schedule_dense([y]), [x, w, b], [y], [a, wa, ba])
    np.testing.assert_allclose(got, a @ wa.T + ba, rtol=1e-4)
    (got,) = run(topi.x86.schedule_dense_pack([p]), [x, w, b], [p], [a, wa, ba])
    np.testing.assert_allclose(got, a @ wa.T + ba, rtol=1e-4)


def test_dense_pack_tiled_size(run, rng):
    x = te.placeholder((64, 48), name="x")
    w = te.placeholder((96, 48), name="w")
    a, wa = rng.random((64, 48), dtype="float32"), rng.random((96, 48), dtype="float32")
    y = topi.x86.dense_pack(x, w)
    assert y.op.tag == "dense_pack"
    (got,) = run(topi.x86.schedule_dense([y]), [x, w], [y], [a, wa])
    np.testing.assert_allclose(got, a @ wa.T, rtol=1e-4)


def test_matmul_transposes(run, rng):
    a = rng.random((12, 9), dtype="float32")
    b = rng.random((9, 20), dtype="float32")
    A = te.placeholder((12, 9), name="A")
    B = te.placeholder((9, 20), name="B")
    At = te.placeholder((9, 12), name="At")
    Bt = te.placeholder((20, 9), name="Bt")
    outs = [topi.nn.matmul(A, B), topi.nn.matmul(At, Bt, transpose_a=True, transpose_b=True)]
    got = run(topi.generic.schedule_matmul(outs), [A, B, At, Bt], outs,
              [a, b, a.T.copy(), b.T.copy()])
    for g in got:
        np.testing.assert_allclose(g, a @ b, rtol=1e-4)


def test_matmul_blocked_schedule(run, rng):
    A = te.placeholder((64, 40), name="A")
    B = te.placeholder((40, 96), name="B")
    C = topi.nn.matmul(A, B)
    a, b = rng.random((64, 40), dtype="float32"), rng.random((40, 96), dtype="float32")
    (got,) = run(topi.x86.schedule_matmul([C]), [A, B], [C], [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4)


def test_batch_matmul(run, rng):
    x = te.placeholder((3, 5, 8), name="x")
    y = te.placeholder((1, 7, 8), name="y")
    z = te.placeholder((3, 8, 6), name="z")
    a, b, c = (rng.random(s, dtype="float32") for s in ((3, 5, 8), (1, 7, 8), (3, 8, 6)))
    bt = topi.nn.batch_matmul(x, y)
    bn = topi.nn.batch_matmul(x, z, transpose_b=False)
    got = run(topi.x86.schedule_batch_matmul([bt]), [x, y], [bt], [a, b])
    np.testing.assert_allclose(got[0], a @ b.transpose(0, 2, 1), rtol=1e-4)
    got = run(topi.x86.schedule_batch_matmul([bn]), [x, z], [bn], [a, c])
    np.testing.assert_allclose(got[0], a @ c, rtol=1e-4)
