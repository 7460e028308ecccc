"""te.gradient (TVM's reverse-mode differentiation of tensor expressions) checked against
gradients worked out by hand in numpy, and against finite differences; topi.full_like,
topi.tensordot and topi.einsum against numpy."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, topi
from compiler.ir.errors import IRError
from compiler.testing import check_numerical_grads


def _run(tensors, args, target, arrays, out_shapes):
    s = te.create_schedule([t.op for t in tensors])
    f = compiler.build(s, list(tensors) + list(args), target)
    outs = [runtime.nd.array(np.zeros(shape, "float32")) for shape in out_shapes]
    f(*outs, *[runtime.nd.array(a) for a in arrays])
    return [o.numpy() for o in outs]


def test_gradient_of_elementwise_and_transposed_reads(target):
    A = te.placeholder((4, 5), name="A")
    B = te.compute((4, 5), lambda i, j: A[i, j] * te.exp(A[i, j]) + A[3 - i, 4 - j], name="B")
    (dA,) = te.gradient(B, [A], head=topi.full_like(B, 1.0))
    a = np.random.uniform(-1, 1, (4, 5)).astype("float32")
    (got,) = _run([dA], [A], target, [a], [(4, 5)])
    want = np.exp(a) * (1 + a) + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_gradient_of_matmul_sum_reduction(target):
    k = te.reduce_axis((0, 6), "k")
    A = te.placeholder((3, 6), name="A")
    W = te.placeholder((6, 4), name="W")
    C = te.compute((3, 4), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
    H = te.placeholder((3, 4), name="H")
    dA, dW = te.gradient(C, [A, W], head=H)
    a, w = np.random.rand(3, 6).astype("float32"), np.random.rand(6, 4).astype("float32")
    h = np.random.rand(3, 4).astype("float32")
    got_a, got_w = _run([dA, dW], [A, W, H], target, [a, w, h], [(3, 6), (6, 4)])
    np.testing.assert_allclose(got_a, h @ w.T, rtol=1e-5)
    np.testing.assert_allclose(got_w, a.T @ h, rtol=1e-5)


def test_gradient_of_max_and_product_reductions(target):
    k = te.reduce_axis((0, 5), "k")
    A = te.placeholder((3, 5), name="A")
    M = te.compute((3,), lambda i: te.max(A[i, k] * 2.0, axis=k), name="M")
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="prod")
    P = te.compute((3,), lambda i: prod(A[i, k], axis=k), name="P")
    (dM,) = te.gradient(M, [A], head=topi.full_like(M, 1.0))
    (dP,) = te.gradient(P, [A], head=topi.full_like(P, 1.0))
    a = np.random.uniform(0.5, 2.0, (3, 5)).astype("float32")
    got_m, got_p = _run([dM, dP], [A], target, [a], [(3, 5), (3, 5)])
    want_m = np.zeros_like(a)
    want_m[np.arange(3), a.argmax(axis=1)] = 2.0
    np.testing.assert_allclose(got_m, want_m)
    np.testing.assert_allclose(got_p, np.prod(a, axis=1, keepdims=True) / a, rtol=1e-5)


def test_default_head_gives_the_jacobian(target):
    A = te.placeholder((3,), name="A")
    B = te.compute((3,), lambda i: A[i] * A[2 - i], name="B")
    (J,) = te.gradient(B, A)
    assert [int(d) for d in J.shape] == [3, 3]
    a = np.array([1.0, 2.0, 3.0], "float32")
    (got,) = _run([J], [A], target, [a], [(3, 3)])
    want = np.diag(a[::-1]) + np.fliplr(np.diag(a))
    want[1, 1] = 2 * a[1]
    np.testing.assert_allclose(got, want)


def test_gradient_through_topi_matches_finite_differences():
    X = te.placeholder((1, 2, 5, 5), name="X")
    W = te.placeholder((3, 2, 3, 3), name="W")
    Y = topi.nn.softmax(topi.reshape(topi.nn.relu(topi.nn.conv2d(X, W, 1, 1, 1)), (1, 75)))
    dX, dW = te.gradient(Y, [X, W], head=topi.full_like(Y, 1.0))
    fwd = compiler.build(te.create_schedule(Y.op), [Y, X, W], "llvm")
    grad = compiler.build(te.create_schedule([dX.op, dW.op]), [dX, dW, X, W], "llvm")
    x = np.random.uniform(-1, 1, (1, 2, 5, 5)).astype("float32")
    w = np.random.uniform(-1, 1, (3, 2, 3, 3)).astype("float32")
    gx, gw = runtime.nd.empty((1, 2, 5, 5), "float32"), runtime.nd.empty((3, 2, 3, 3), "float32")
    grad(gx, gw, runtime.nd.array(x), runtime.nd.array(w))
    # softmax sums to one: the gradient of the sum is zero
    np.testing.assert_allclose(gx.numpy(), 0, atol=1e-5)

    def forward(xv, wv):
        out = runtime.nd.empty((1, 75), "float32")
        fwd(out, runtime.nd.array(xv), runtime.nd.array(wv))
        return float((out.numpy() * np.arange(75)).sum())

    ramp = te.compute((1, 75), lambda i, j: j.astype("float32"), name="ramp")
    dX2, dW2 = te.gradient(Y, [X, W], head=ramp)
    grad2 = compiler.build(te.create_schedule([dX2.op, dW2.op]), [dX2, dW2, X, W], "llvm")
    grad2(gx, gw, runtime.nd.array(x), runtime.nd.array(w))
    check_numerical_grads(forward, [x, w], [gx.numpy(), gw.numpy()])
    with pytest.raises(AssertionError, match="differs from the numerical one"):
        check_numerical_grads(forward, [x, w], [gx.numpy() + 1.0, gw.numpy()])


def test_what_cannot_be_differentiated():
    A = te.placeholder((4,), name="A")
    k = te.reduce_axis((0, 4), "k")
    orr = te.comm_reducer(lambda x, y: x - y, lambda t: te.const(0, t), name="sub")
    B = te.compute((1,), lambda i: orr(A[k], axis=k), name="B")
    with pytest.raises(IRError, match="only sum, max and min reductions"):
        te.gradient(B, [A])
    C = te.extern((4,), [A], lambda ins, outs: compiler.tir.call_packed("f", ins[0], outs[0]),
                  name="C")
    with pytest.raises(IRError, match="only te.compute operations"):
        te.gradient(C, [A])


def test_full_like_tensordot_and_einsum(target):
    A = te.placeholder((3, 4, 5), name="A")
    B = te.placeholder((4, 5, 2), name="B")
    D = topi.tensordot(A, B, 2)
    D1 = topi.tensordot(A, B, ([1], [0]))
    X = te.placeholder((3, 3), name="X")
    E = topi.einsum("ii->i", X)
    F = topi.einsum("ij,jk", te.placeholder((3, 4), name="P"), te.placeholder((4, 2), name="Q"))
    G = topi.full_like(X, 7.0)
    assert [int(d) for d in D1.shape] == [3, 5, 5, 2] and [int(d) for d in F.shape] == [3, 2]
    a, b = np.random.rand(3, 4, 5).astype("float32"), np.random.rand(4, 5, 2).astype("float32")
    x = np.random.rand(3, 3).astype("float32")
    got_d, got_d1 = _run([D, D1], [A, B], target, [a, b], [(3, 2), (3, 5, 5, 2)])
    np.testing.assert_allclose(got_d, np.tensordot(a, b, 2), rtol=1e-5)
    np.testing.assert_allclose(got_d1, np.tensordot(a, b, ([1], [0])), rtol=1e-5)
    got_e, got_g = _run([E, G], [X], target, [x], [(3,), (3, 3)])
    np.testing.assert_allclose(got_e, np.einsum("ii->i", x))
    np.testing.assert_array_equal(got_g, np.full((3, 3), 7.0))
    with pytest.raises(ValueError, match="ellipsis"):
        topi.einsum("...i->i", X)
