"""Chained indexing `A[i][j]` (TensorSlice) in compute bodies, and `fuse` of one axis and of no
axis (a new outermost loop of extent 1), as TVM."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te
from compiler.ir.errors import IRError


def _run2d(target, s, args, a, shape_out):
    f = build(s, args, target=target, name="f")
    out = runtime.nd.empty(shape_out, args[-1].dtype)
    f["f"](runtime.nd.array(a), out)
    return out.numpy()


def test_chained_index_is_the_element():
    A = te.placeholder((3, 4, 5), name="A")
    i, j, k = te.var("i"), te.var("j"), te.var("k")
    part = A[i]
    assert isinstance(part, te.TensorSlice)
    assert part.tensor is A and part.dtype == "float32"
    assert isinstance(A[i][j], te.TensorSlice)
    load = A[i][j][k]
    assert isinstance(load, te.TensorLoad) and load.tensor is A
    assert [x for x in load.indices] == [i, j, k]
    assert isinstance(A[i, j][k], te.TensorLoad) and isinstance(A[i][j, k], te.TensorLoad)


def test_partial_slice_as_a_value_fails():
    A = te.placeholder((3, 4), name="A")
    with pytest.raises(IRError, match="2 dimensions but is indexed with 1"):
        te.compute((3,), lambda i: A[i] * 2.0)
    with pytest.raises(IRError, match="2 dimensions but is indexed with 1"):
        te.compute((3,), lambda i: A[i])
    with pytest.raises(IRError, match="indexed with 3"):
        A[1][2][0]


def test_chained_index_in_compute(target):
    A = te.placeholder((3, 4), name="A")
    B = te.compute((4, 3), lambda i, j: A[j][i] * 2.0 + A[j, i], name="B")
    s = te.create_schedule(B.op)
    a = np.arange(12, dtype="float32").reshape(3, 4)
    np.testing.assert_array_equal(_run2d(target, s, [A, B], a, (4, 3)), a.T * 3)


def test_chained_index_in_reduction(target):
    A = te.placeholder((5, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((5,), lambda i: te.sum(A[i][k], axis=k), name="B")
    s = te.create_schedule(B.op)
    a = np.random.default_rng(0).random((5, 6)).astype("float32")
    np.testing.assert_allclose(_run2d(target, s, [A, B], a, (5,)), a.sum(axis=1), rtol=1e-5)


def test_fuse_one_axis_returns_it(target):
    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    x, y = B.op.axis
    assert s[B].fuse(y) is y
    assert s[B].fuse([x]) is x
    assert s[B].leaf_iter_vars == [x, y]
    a = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(_run2d(target, s, [A, B], a, (4, 6)), a + 1)


def test_fuse_no_axis_is_a_unit_outer_loop(target):
    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    unit = s[B].fuse()
    assert unit.name == "singleton"
    assert s[B].leaf_iter_vars[0] is unit and len(s[B].leaf_iter_vars) == 3
    assert int(unit.dom.min) == 0 and int(unit.dom.extent) == 1
    assert "for j in range(6)" in str(lower(s, [A, B]))  # the unit loop folds away
    a = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(_run2d(target, s, [A, B], a, (4, 6)), a * 2)


def test_singleton_can_be_scheduled_further(target):
    """The unit loop is a leaf like any other: reorder it inward, attach a producer at it."""
    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((4, 6), lambda i, j: B[i, j] * 3.0, name="C")
    s = te.create_schedule(C.op)
    unit = s[C].fuse()
    x, y = C.op.axis
    s[C].reorder(x, unit, y)
    s[B].compute_at(s[C], unit)
    a = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(_run2d(target, s, [A, C], a, (4, 6)), (a + 1) * 3)


def test_fuse_no_axis_in_a_reduction(target):
    A = te.placeholder((5, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((5,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    s[B].fuse()
    a = np.random.default_rng(1).random((5, 6)).astype("float32")
    np.testing.assert_allclose(_run2d(target, s, [A, B], a, (5,)), a.sum(axis=1), rtol=1e-5)
