"""te/tir floordiv, floormod, indexdiv, indexmod, truncdiv, truncmod and div: floor against
truncating semantics on negative operands, checked against numpy on both targets."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te, tir
from compiler.ir.errors import IRError

NAMES = ("div", "floordiv", "floormod", "indexdiv", "indexmod", "truncdiv", "truncmod")


def _trunc_div(a, b):
    return (a - np.fmod(a, b)) // b


# name -> numpy reference on integers
REFERENCE = {
    "floordiv": np.floor_divide,
    "floormod": np.mod,
    "indexdiv": np.floor_divide,
    "indexmod": np.mod,
    "truncdiv": _trunc_div,
    "truncmod": np.fmod,
    "div": _trunc_div,
}


def test_exported_from_te_and_tir():
    for name in NAMES:
        assert getattr(te, name) is getattr(tir, name)


@pytest.mark.parametrize("name,expected", [
    ("floordiv", -4), ("floormod", 1), ("indexdiv", -4), ("indexmod", 1),
    ("truncdiv", -3), ("truncmod", -1), ("div", -3)])
def test_python_ints_fold_to_constants(name, expected):
    value = getattr(te, name)(-7, 2)
    assert isinstance(value, tir.IntImm) and value.dtype == "int32"
    assert int(value) == expected


def test_node_types_on_expressions():
    x, y = te.var("x"), te.var("y")
    assert isinstance(te.floordiv(x, y), tir.FloorDiv)
    assert isinstance(te.floormod(x, 3), tir.FloorMod)
    assert isinstance(te.indexdiv(x, y), tir.FloorDiv)
    assert isinstance(te.indexmod(7, y), tir.FloorMod)
    assert isinstance(te.truncdiv(x, y), tir.Div)
    assert isinstance(te.truncmod(x, y), tir.Mod)
    assert isinstance(te.div(x, y), tir.Div)
    f = te.div(te.var("f", "float32"), 2)
    assert isinstance(f, tir.Div) and f.dtype == "float32"
    assert float(te.div(7.0, 2.0)) == 3.5


def test_trunc_forms_reject_floats():
    with pytest.raises(IRError, match="integer operands"):
        te.truncdiv(te.var("f", "float32"), 2)
    with pytest.raises(IRError, match="integer operands"):
        te.indexmod(1.5, 2)


def _run(target, dtype, fbody, a, b):
    n = len(a)
    A = te.placeholder((n,), dtype=dtype, name="A")
    B = te.placeholder((n,), dtype=dtype, name="B")
    C = te.compute((n,), lambda i: fbody(A[i], B[i]), name="C")
    s = te.create_schedule(C.op)
    f = build(s, [A, B, C], target=target, name="f")
    c = runtime.nd.empty((n,), C.dtype)
    f["f"](runtime.nd.array(a), runtime.nd.array(b), c)
    return c.numpy()


def _operands(dtype):
    a = np.array([-9, -7, -6, -1, 0, 1, 6, 7, 9, -8, 8, -5], dtype=dtype)
    b = np.array([2, 2, -4, 3, -3, -3, 4, -2, -4, 3, -3, 5], dtype=dtype)
    return a, b


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_negative_operands_against_numpy(target, name, dtype):
    a, b = _operands(dtype)
    out = _run(target, dtype, getattr(te, name), a, b)
    np.testing.assert_array_equal(out, REFERENCE[name](a, b).astype(dtype))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("divisor", [3, -3, 4, -4])
def test_constant_divisor_against_numpy(target, name, divisor):
    a = np.arange(-13, 14, dtype="int32")
    n = len(a)
    A = te.placeholder((n,), dtype="int32", name="A")
    C = te.compute((n,), lambda i: getattr(te, name)(A[i], divisor), name="C")
    s = te.create_schedule(C.op)
    f = build(s, [A, C], target=target, name="f")
    c = runtime.nd.empty((n,), "int32")
    f["f"](runtime.nd.array(a), c)
    np.testing.assert_array_equal(c.numpy(), REFERENCE[name](a, np.int32(divisor)))


@pytest.mark.parametrize("name", ["floordiv", "indexdiv", "truncdiv", "floormod", "truncmod"])
def test_on_loop_indices(target, name):
    """The index forms on a shifted loop variable (i - 6 is negative for the first values)."""
    n = 13
    C = te.compute((n,), lambda i: getattr(te, name)(i - 6, 4), name="C")
    s = te.create_schedule(C.op)
    f = build(s, [C], target=target, name="f")
    c = runtime.nd.empty((n,), "int32")
    f["f"](c)
    np.testing.assert_array_equal(c.numpy(), REFERENCE[name](np.arange(n) - 6, 4))


def test_float_div_and_floordiv(target):
    a = np.array([-7.5, -7.0, 7.0, 2.5, -0.5], dtype="float32")
    b = np.array([2.0, -2.0, 2.0, -1.0, 3.0], dtype="float32")
    np.testing.assert_allclose(_run(target, "float32", te.div, a, b), a / b, rtol=1e-6)
    np.testing.assert_allclose(_run(target, "float32", te.floordiv, a, b), np.floor(a / b))
    np.testing.assert_allclose(_run(target, "float32", te.floormod, a, b), np.mod(a, b),
                               rtol=1e-6)
