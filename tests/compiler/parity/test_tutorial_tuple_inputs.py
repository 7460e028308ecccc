"""TVM's tutorial "Compute and Reduce with Tuple Inputs" (tutorials/language/tuple_inputs.py),
its code kept with `import tvm` replaced (`tvm.lower`/`tvm.build` are `lower`/`build`,
`tvm.tir` is `tir`, `tvm.te` is `te`), each part built and checked against numpy."""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te, tir


def _call(f, arrays):
    nds = [runtime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def test_batchwise_computation(target):
    n = te.var("n")
    m = te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")
    s = te.create_schedule(B0.op)
    text = str(lower(s, [A0, A1, B0, B1], simple_mode=True))
    assert text.count("for i in range(m):") == 1  # both outputs in one loop nest
    f = build(s, [A0, A1, B0, B1], target)
    rng = np.random.default_rng(0)
    a0, a1 = rng.random((3, 4), dtype="float32"), rng.random((3, 4), dtype="float32")
    *_, b0, b1 = _call(f, [a0, a1, np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32")])
    np.testing.assert_allclose(b0, a0 + 2, rtol=1e-6)
    np.testing.assert_allclose(b1, a1 * 3, rtol=1e-6)


# x and y are the operands of reduction, both of them is a tuple of index and value.
def fcombine(x, y):
    lhs = tir.Select((x[1] >= y[1]), x[0], y[0])
    rhs = tir.Select((x[1] >= y[1]), x[1], y[1])
    return lhs, rhs


# our identity element also need to be a tuple, so `fidentity` accepts two types as inputs.
def fidentity(t0, t1):
    return tir.const(-1, t0), te.min_value(t1)


def test_reduction_with_collaborative_inputs(target):
    argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
    m = te.var("m")
    n = te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="int32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")
    s = te.create_schedule(T0.op)
    text = str(lower(s, [idx, val, T0, T1], simple_mode=True))
    assert "T.v0[i] = -1" in text and "T.v1[i] = -2147483648" in text
    f = build(s, [idx, val, T0, T1], target)
    iv = np.tile(np.arange(9, dtype="int32"), (5, 1))
    vv = np.random.default_rng(1).permutation(45).reshape(5, 9).astype("int32")
    *_, t0, t1 = _call(f, [iv, vv, np.zeros(5, "int32"), np.zeros(5, "int32")])
    np.testing.assert_array_equal(t0, vv.argmax(axis=1))
    np.testing.assert_array_equal(t1, vv.max(axis=1))


def test_schedule_operation_with_tuple_inputs(target):
    n = te.var("n")
    m = te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A0[i, j] * 3), name="B")
    A1 = te.placeholder((m, n), name="A1")
    C = te.compute((m, n), lambda i, j: A1[i, j] + B0[i, j], name="C")

    s = te.create_schedule(C.op)
    s[B0].compute_at(s[C], C.op.axis[0])
    # both outputs of B are scheduled together: computed for one row of C
    assert s[B1] is s[B0]
    text = str(lower(s, [A0, A1, C], simple_mode=True))
    assert "B.v0 = allocate([n]" in text and "B.v1 = allocate([n]" in text
    assert text.index("for i in range(m):") < text.index("B.v0 = allocate(")
    f = build(s, [A0, A1, C], target)
    rng = np.random.default_rng(2)
    a0, a1 = rng.random((4, 6), dtype="float32"), rng.random((4, 6), dtype="float32")
    *_, c = _call(f, [a0, a1, np.zeros((4, 6), "float32")])
    np.testing.assert_allclose(c, a1 + a0 + 2, rtol=1e-6)
