"""lower_intrin: each rewrite as the IR before and the IR expected after, the values kept (the
interpreter against numpy), and the very same module when there is nothing to rewrite."""
import numpy as np
import pytest

from compiler.ir import IRModule
from compiler.ir.dtype import DType
from compiler.ir.structural_equal import assert_structural_equal
from compiler.tir import (
    Add,
    Broadcast,
    BufferStore,
    Call,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    Let,
    Mul,
    PrimFunc,
    Ramp,
    Select,
    Sub,
    Var,
    decl_buffer,
    interpreter,
)
from compiler.tir.transform.lower_intrin import lower_intrin

F32, I32 = DType.parse("float32"), DType.parse("int32")


def _mod(value, *scalars):
    """f(scalars..., Out) { Out[0] = value }"""
    out = decl_buffer((1,), value.dtype, "Out")
    func = PrimFunc((*scalars, out), BufferStore(out, value, (0,)), {}, {"global_symbol": "f"})
    return IRModule({"f": func})


def _lowered_value(value, *scalars):
    before = _mod(value, *scalars)
    after = lower_intrin(before)
    assert after is not before
    assert lower_intrin(after) is after  # nothing left to rewrite: the very same module
    return after["f"].body.value


def _f32(v):
    return FloatImm(F32, v)


def test_sigmoid_becomes_one_over_one_plus_exp_of_minus_x():
    x = Var("x", "float32")
    got = _lowered_value(Call(F32, "tir.sigmoid", (x,)), x)
    expected = Div(_f32(1.0), Add(_f32(1.0), Call(F32, "tir.exp", (Sub(_f32(0.0), x),))))
    assert_structural_equal(got, expected)


def test_rsqrt_becomes_one_over_sqrt():
    x = Var("x", "float32")
    got = _lowered_value(Call(F32, "tir.rsqrt", (x,)), x)
    assert_structural_equal(got, Div(_f32(1.0), Call(F32, "tir.sqrt", (x,))))


def test_exp10_becomes_pow_of_ten():
    x = Var("x", "float64")
    f64 = DType.parse("float64")
    got = _lowered_value(Call(f64, "tir.exp10", (x,)), x)
    assert_structural_equal(got, Call(f64, "tir.pow", (FloatImm(f64, 10.0), x)))


def test_pow_by_a_small_whole_constant_is_multiplied_out():
    x = Var("x", "float32")
    assert_structural_equal(_lowered_value(Call(F32, "tir.pow", (x, _f32(3.0))), x),
                            Mul(Mul(x, x), x))
    # a base that is not a variable is computed once (a Let), a vector exponent too
    v = Var("v", "float32x8")
    got = _lowered_value(Call(DType.parse("float32x8"), "tir.pow",
                              (v + v, Broadcast(_f32(2.0), 8))), v)
    assert isinstance(got, Let) and isinstance(got.body, Mul) and got.body.a is got.var
    # other exponents stay calls
    for n in (0.0, 2.5, 5.0, -1.0):
        call = Call(F32, "tir.pow", (x, _f32(n)))
        assert lower_intrin(_mod(call, x))["f"].body.value is call


def test_likely_becomes_its_argument_and_nested_calls_are_lowered():
    x = Var("x", "float32")
    cond = Call(DType.parse("bool"), "tir.likely", (x > _f32(0.0),))
    inner = Call(F32, "tir.rsqrt", (x,))
    got = _lowered_value(Select(cond, inner, x), x)
    assert_structural_equal(got, Select(x > _f32(0.0), Div(_f32(1.0), Call(F32, "tir.sqrt", (x,))),
                                        x))


def test_vector_sigmoid_uses_broadcast_constants():
    vec = DType.parse("float32x4")
    A = decl_buffer((4,), "float32", "A")
    load = A[Ramp(IntImm(I32, 0), IntImm(I32, 1), 4)]
    got = _lowered_value(Call(vec, "tir.sigmoid", (load,)), A)
    one, zero = Broadcast(_f32(1.0), 4), Broadcast(_f32(0.0), 4)
    expected = Div(one, Add(one, Call(vec, "tir.exp", (Sub(zero, load),))))
    assert_structural_equal(got, expected)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_floordiv_by_power_of_two_is_a_shift(dtype):
    dt = DType.parse(dtype)
    i = Var("i", dtype)
    got = _lowered_value(FloorDiv(i, IntImm(dt, 8)), i)
    assert_structural_equal(got, Call(dt, "tir.shift_right", (i, IntImm(dt, 3))))


def test_integer_floormod_by_power_of_two_is_a_mask():
    i = Var("i")
    got = _lowered_value(FloorMod(i, IntImm(I32, 16)), i)
    assert_structural_equal(got, Call(I32, "tir.bitwise_and", (i, IntImm(I32, 15))))


def test_division_and_modulo_by_one():
    i = Var("i")
    div = lower_intrin(_mod(FloorDiv(i, IntImm(I32, 1)), i))["f"].body.value
    assert div is i
    mod = lower_intrin(_mod(FloorMod(i, IntImm(I32, 1)), i))["f"].body.value
    assert_structural_equal(mod, Call(I32, "tir.bitwise_and", (i, IntImm(I32, 0))))


def test_vector_floordiv_by_broadcast_power_of_two():
    i = Var("i")
    vi = DType.parse("int32x4")
    ramp = Ramp(i, IntImm(I32, 1), 4)
    got = _lowered_value(FloorDiv(ramp, Broadcast(IntImm(I32, 4), 4)), i)
    assert_structural_equal(got, Call(vi, "tir.shift_right",
                                      (ramp, Broadcast(IntImm(I32, 2), 4))))
    got = _lowered_value(FloorMod(ramp, Broadcast(IntImm(I32, 4), 4)), i)
    assert_structural_equal(got, Call(vi, "tir.bitwise_and",
                                      (ramp, Broadcast(IntImm(I32, 3), 4))))


def test_float_floordiv_and_floormod_use_floor():
    a, b = Var("a", "float32"), Var("b", "float32")
    got = _lowered_value(FloorDiv(a, b), a, b)
    assert_structural_equal(got, Call(F32, "tir.floor", (Div(a, b),)))
    got = _lowered_value(FloorMod(a, b), a, b)
    assert_structural_equal(got, Sub(a, Mul(Call(F32, "tir.floor", (Div(a, b),)), b)))


@pytest.mark.parametrize("divisor", [3, 6, -4, 0])
def test_other_integer_divisors_are_left_for_the_codegens(divisor):
    i = Var("i")
    for op in (FloorDiv, FloorMod):
        mod = _mod(op(i, IntImm(I32, divisor)), i)
        assert lower_intrin(mod) is mod


def test_symbolic_divisor_and_plain_math_are_left_alone():
    i, n, x = Var("i"), Var("n"), Var("x", "float32")
    mod = _mod(FloorDiv(i, n) + FloorMod(i, n), i, n)
    assert lower_intrin(mod) is mod
    mod = _mod(Call(F32, "tir.exp", (x,)) + Call(F32, "tir.sqrt", (x,)), x)
    assert lower_intrin(mod) is mod


def _elementwise(fn, dtype, n=16):
    """f(A, B) { for i: B[i] = fn(A[i]) }"""
    A, B = decl_buffer((n,), dtype, "A"), decl_buffer((n,), dtype, "B")
    i = Var("i")
    body = For(i, IntImm(I32, 0), IntImm(I32, n), ForKind.SERIAL, BufferStore(B, fn(A[i]), (i,)))
    return IRModule({"f": PrimFunc((A, B), body, {}, {"global_symbol": "f"})})


def _run(mod, a):
    b = np.zeros_like(a)
    interpreter.run(mod["f"], a.copy(), b)
    return b


@pytest.mark.parametrize("divisor", [1, 2, 8, 32])
@pytest.mark.parametrize("op, ref", [(FloorDiv, np.floor_divide), (FloorMod, np.mod)])
def test_integer_shift_and_mask_keep_floor_semantics_on_negative_values(op, ref, divisor):
    a = np.arange(-37, 37, 5, dtype="int32")
    before = _elementwise(lambda x: op(x, IntImm(I32, divisor)), "int32", a.size)
    after = lower_intrin(before)
    assert after is not before
    np.testing.assert_array_equal(_run(after, a), ref(a, divisor))
    np.testing.assert_array_equal(_run(before, a), ref(a, divisor))


def test_float_rewrites_keep_values():
    a = np.array([-7.5, -3.0, -0.25, 0.5, 1.0, 2.75, 9.0, 100.0], dtype="float32")
    pos = np.abs(a) + 0.5
    two = _f32(2.5)
    cases = [
        (lambda x: FloorDiv(x, two), a, np.floor_divide(a, np.float32(2.5))),
        (lambda x: FloorMod(x, two), a, np.mod(a, np.float32(2.5))),
        (lambda x: Call(F32, "tir.sigmoid", (x,)), a, 1 / (1 + np.exp(-a))),
        (lambda x: Call(F32, "tir.rsqrt", (x,)), pos, 1 / np.sqrt(pos)),
        (lambda x: Call(F32, "tir.exp10", (x * _f32(0.1),)), a, np.power(10, a * 0.1)),
    ]
    for fn, arg, expected in cases:
        before = _elementwise(fn, "float32", arg.size)
        after = lower_intrin(before)
        assert after is not before
        np.testing.assert_allclose(_run(after, arg), expected.astype("float32"), rtol=1e-5,
                                   atol=1e-6)
