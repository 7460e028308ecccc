"""tir.call_extern / call_pure_extern (external C functions: libm, libc) and tir.call_intrin
(an intrinsic by name) in compute bodies, built and run on both targets against numpy."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te, tir
from compiler.ir.errors import IRError


def _build_unary(target, dtype, fbody, vectorize=False, n=16):
    A = te.placeholder((n,), dtype=dtype, name="A")
    C = te.compute((n,), lambda i: fbody(A[i]), name="C")
    s = te.create_schedule(C.op)
    if vectorize:
        _, inner = s[C].split(C.op.axis[0], factor=4)
        s[C].vectorize(inner)
    f = build(s, [A, C], target=target, name="f")

    def run(a):
        c = runtime.nd.empty((n,), C.dtype)
        f["f"](runtime.nd.array(a), c)
        return c.numpy()

    return run


def test_call_extern_node():
    x = te.var("x", "float32")
    call = tir.call_extern("float32", "fabsf", x)
    assert isinstance(call, tir.Call) and call.op == "tir.call_extern"
    assert call.dtype == "float32"
    assert call.args[0].value == "fabsf" and call.args[1] is x
    assert tir.call_pure_extern("float64", "cbrt", 1.0).op == "tir.call_pure_extern"
    assert tir.to_text(call) == 'tir.call_extern("fabsf", x)'  # TVM prints strings so


@pytest.mark.parametrize("vectorize", [False, True])
def test_fabsf(target, vectorize):
    run = _build_unary(target, "float32",
                       lambda x: tir.call_extern("float32", "fabsf", x), vectorize)
    a = np.linspace(-4, 4, 16).astype("float32")
    np.testing.assert_array_equal(run(a), np.abs(a))


def test_libm_two_arguments(target):
    n = 12
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: tir.call_extern("float32", "atan2f", A[i], B[i]) +
                   tir.call_extern("float32", "fmaxf", A[i], B[i]), name="C")
    s = te.create_schedule(C.op)
    f = build(s, [A, B, C], target=target, name="f")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    c = runtime.nd.empty((n,), "float32")
    f["f"](runtime.nd.array(a), runtime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.arctan2(a, b) + np.maximum(a, b), rtol=1e-5)


def test_pure_extern_float64_cbrt(target):
    run = _build_unary(target, "float64",
                       lambda x: tir.call_pure_extern("float64", "cbrt", x))
    a = np.linspace(-27, 27, 16)
    np.testing.assert_allclose(run(a), np.cbrt(a), rtol=1e-12)


def test_libc_int_function(target):
    run = _build_unary(target, "int32", lambda x: tir.call_extern("int32", "abs", x))
    a = np.arange(-8, 8, dtype="int32")
    np.testing.assert_array_equal(run(a), np.abs(a))


def test_extern_with_cast_argument(target):
    """Arguments go in their own C types: cast an int to the float the function takes."""
    n = 8
    C = te.compute((n,), lambda i: tir.call_extern("float32", "sqrtf", i.astype("float32")),
                   name="C")
    s = te.create_schedule(C.op)
    f = build(s, [C], target=target, name="f")
    c = runtime.nd.empty((n,), "float32")
    f["f"](c)
    np.testing.assert_allclose(c.numpy(), np.sqrt(np.arange(n)), rtol=1e-6)


@pytest.mark.parametrize("op,ref", [("tir.exp", np.exp), ("tir.fabs", np.abs),
                                    ("tir.sqrt", lambda a: np.sqrt(np.abs(a)))])
def test_call_intrin(target, op, ref):
    body = (lambda x: tir.call_intrin("float32", op, te.abs(x))) if op == "tir.sqrt" else \
        (lambda x: tir.call_intrin("float32", op, x))
    run = _build_unary(target, "float32", body)
    a = np.linspace(-2, 2, 16).astype("float32")
    np.testing.assert_allclose(run(a), ref(a), rtol=1e-6)


def test_call_intrin_node_and_errors():
    x = te.var("x", "float32")
    call = tir.call_intrin("float32", "tir.exp", x)
    assert isinstance(call, tir.Call) and call.op == "tir.exp" and call.args == (x,)
    with pytest.raises(IRError, match="did you mean 'tir.exp'"):
        tir.call_intrin("float32", "exp", x)
    with pytest.raises(IRError, match="not an intrinsic"):
        tir.call_intrin("float32", "tir.no_such_op", x)
    with pytest.raises(IRError, match="takes 1 arguments"):
        tir.call_intrin("float32", "tir.exp", x, x)
    with pytest.raises(IRError, match="C identifier"):
        tir.call_extern("float32", "not a name", x)
