"""Binary operators with numpy broadcasting, comparisons and where (exact or rtol 1e-6)."""
import numpy as np
import pytest

from compiler import te, topi
from compiler.ir.errors import IRError


def test_arithmetic_broadcasts(run, rng):
    x = te.placeholder((2, 1, 5), name="x")
    y = te.placeholder((3, 1), name="y")
    a = rng.random((2, 1, 5), dtype="float32") + 0.5
    b = rng.random((3, 1), dtype="float32") + 0.5
    fns = [(topi.add, np.add), (topi.subtract, np.subtract), (topi.multiply, np.multiply),
           (topi.divide, np.divide), (topi.power, np.power), (topi.maximum, np.maximum),
           (topi.minimum, np.minimum)]
    outs = [f(x, y) for f, _ in fns]
    assert outs[0].op.tag == topi.tag.BROADCAST and [int(d) for d in outs[0].shape] == [2, 3, 5]
    got = run(topi.x86.schedule_injective(outs), [x, y], outs, [a, b])
    for (_, ref), g in zip(fns, got):
        np.testing.assert_allclose(g, ref(a, b), rtol=1e-5)


def test_comparisons_and_where(run, rng):
    x = te.placeholder((4, 6), name="x")
    y = te.placeholder((6,), name="y")
    a = rng.integers(0, 3, (4, 6)).astype("float32")
    b = rng.integers(0, 3, (6,)).astype("float32")
    cmp = [(topi.equal, np.equal), (topi.not_equal, np.not_equal), (topi.less, np.less),
           (topi.less_equal, np.less_equal), (topi.greater, np.greater),
           (topi.greater_equal, np.greater_equal)]
    outs = [topi.cast(f(x, y), "int32") for f, _ in cmp]
    w = topi.where(topi.greater(x, y), x, topi.negative(topi.broadcast_to(y, (4, 6))))
    outs.append(w)
    got = run(topi.x86.schedule_injective(outs), [x, y], outs, [a, b])
    for (_, ref), g in zip(cmp, got):
        np.testing.assert_array_equal(g, ref(a, b).astype("int32"))
    np.testing.assert_array_equal(got[-1], np.where(a > b, a, -np.broadcast_to(b, (4, 6))))


def test_scalar_operand_and_elemwise_tag(run, rng):
    x = te.placeholder((7, 3), name="x")
    y = te.placeholder((7, 3), name="y")
    z = topi.multiply(topi.add(x, y), 2.0)
    assert z.op.tag == topi.tag.ELEMWISE
    a, b = rng.random((7, 3), dtype="float32"), rng.random((7, 3), dtype="float32")
    (got,) = run(topi.x86.schedule_injective([z]), [x, y], [z], [a, b])
    np.testing.assert_allclose(got, (a + b) * 2, rtol=1e-6)


def test_shapes_that_do_not_broadcast_are_an_error():
    with pytest.raises(IRError, match="do not broadcast"):
        topi.add(te.placeholder((3, 4)), te.placeholder((5,)))
