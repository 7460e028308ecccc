"""Unit tests of the simplifier's rule tables, one group per table."""
import pytest

from compiler.arith import simplify
from compiler.arith.rules import TABLES
from compiler.ir import structural_equal
from compiler.ir.dtype import DType
from compiler.tir import (
    Broadcast,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Not,
    Ramp,
    Select,
    SizeVar,
    Var,
    const,
)

i, j, k, x, y = Var("i"), Var("j"), Var("k"), Var("x"), Var("y")
n = SizeVar("n")
f = Var("f", "float32")
b = Var("b", "bool")


def check(before, after, bounds=None):
    got = simplify(before, bounds)
    want = after if not isinstance(after, (int, bool)) else const(after)
    if isinstance(after, bool):
        want = const(after)
    assert structural_equal(got, want), f"{before} -> {got}, expected {want}"


def test_every_table_is_named_and_nonempty():
    assert set(TABLES) >= {"const_fold", "identity", "linear", "div_mod", "min_max", "compare",
                           "logic", "select", "cast", "let", "vector"}
    names = [r.name for t in TABLES.values() for r in t]
    assert len(names) == len(set(names)), "rule names must be unique"


# ---- constant folding -------------------------------------------------------------------------
@pytest.mark.parametrize("before,after", [
    (const(7) // const(2), 3), (const(-7) // const(2), -4), (const(-7) % const(2), 1),
    (Div(const(-7), const(2)), -3), (Mod(const(-7), const(2)), -1),
    (Div(const(7), const(-2)), -3), (Mod(const(7), const(-2)), 1),
    (const(7) % const(-2), -1), (Min(const(3), const(-1)), -1), (Max(const(3), const(-1)), 3),
    (const(3) < const(4), True), (const(3) >= const(4), False),
    (Select(const(True), const(1), const(2)), 1), (Not(const(False)), True),
])
def test_const_fold(before, after):
    check(before, after)


def test_const_fold_wraps_narrow_ints_and_rounds_floats():
    check(IntImm(DType.parse("int8"), 100) + IntImm(DType.parse("int8"), 100),
          IntImm(DType.parse("int8"), -56))
    check(IntImm(DType.parse("uint8"), 3) - IntImm(DType.parse("uint8"), 5),
          IntImm(DType.parse("uint8"), 254))
    check(Cast(DType.parse("int8"), const(300)), IntImm(DType.parse("int8"), 44))
    check(Cast(DType.parse("int32"), const(-2.7)), const(-2))
    check(const(1.0) / const(4.0), const(0.25))
    got = simplify(const(0.1) * const(3.0))
    assert isinstance(got, FloatImm) and got.value == float(__import__("numpy").float32(
        __import__("numpy").float32(0.1) * __import__("numpy").float32(3.0)))


def test_division_by_zero_is_not_folded():
    e = const(1) // const(0)
    assert isinstance(simplify(e), FloorDiv)


# ---- identities and linear forms --------------------------------------------------------------
@pytest.mark.parametrize("before,after", [
    (x + 0, x), (x * 1, x), (x * 0, 0), (x - x, 0), ((x + 1) + 2, x + 3),
    ((i * 4 + j) - i * 4, j), (j + i * 4, i * 4 + j), (x * 2 + x * 3, x * 5),
    (n - i - 1 + i, n - 1), (y - (x - y), y * 2 - x), (0 - x - y, x * -1 - y),
    (3 - x + 0, 3 - x),
])
def test_linear(before, after):
    check(before, after)


def test_float_identities_keep_float_semantics():
    check(f + 0.0, f)
    check(f * 1.0, f)
    assert not isinstance(simplify(f * 0.0), FloatImm)  # NaN * 0 is NaN
    assert not isinstance(simplify(f - f), FloatImm)


# ---- division and remainder --------------------------------------------------------------------
@pytest.mark.parametrize("before,after,bounds", [
    ((i * 8 + j) // 8, i, {j: (0, 7)}),
    ((i * 8 + j) % 8, j, {j: (0, 7)}),
    ((x // 4) * 4 + x % 4, x, None),
    (x - (x // 4) * 4, x % 4, None),
    (Div(x, const(4)) * 4 + Mod(x, const(4)), x, None),
    ((x // 4) // 8, x // 32, None),
    ((x % 16) % 4, x % 4, None),
    ((x * 8) // 4, x * 2, None),
    ((x * 4) // 8, x // 2, None),
    ((x * 4) % 8, (x % 2) * 4, None),
    ((x + 10) // 8, (x + 2) // 8 + 1, None),
    (Div(i, const(4)), i // 4, {i: (0, 100)}),
    (Mod(i, const(4)), i % 4, {i: (0, 100)}),
    (x // 1, x, None), (x % 1, 0, None),
    (i // 16, 0, {i: (0, 15)}), (i % 16, i - 16, {i: (16, 31)}),
    # a fused loop index split again: (f*14 + j) with j in [0, 14), divided by multiples of 14
    ((i * 14 + j) // 784, i // 56, {j: (0, 13)}),
    ((i * 14 + j) // 28 % 28, i // 2 % 28, {j: (0, 13)}),
    ((i * 14 + j) % 28, i % 2 * 14 + j, {j: (0, 13)}),
    ((i * 14 + j + 3) // 28, (i * 14 + j + 3) // 28, {j: (0, 13)}),  # j + 3 may reach 14
    ((i * 14 + j) // 28, (i * 14 + j) // 28, None),  # j unbounded
    ((i * 28 + k * 42 + j) // 84, (k * 3 + i * 2) // 6, {j: (0, 13)}),  # 14: a gcd of gcds
    # the digits of a fused index put back together: (x//3025)*48400 + (x//55%55)*880 + x%55*16
    (x // 3025 * 48400 + x // 55 % 55 * 880 + x % 55 * 16, x * 16, None),
    (x // 32 * 32 + x // 8 % 4 * 8 + x % 8, x, None),
    (Div(x, const(32)) * 32 + Mod(Div(x, const(8)), const(4)) * 8 + Mod(x, const(8)), x, None),
    (x // 3025 * 48400 + x // 55 % 55 * 880, x // 55 * 880, None),
    (x // 3025 * 48400 + x // 55 % 55 * 440, x // 3025 * 48400 + x // 55 % 55 * 440, None),
])
def test_div_mod(before, after, bounds):
    check(before, after, bounds)


def test_truncdiv_of_possibly_negative_is_kept():
    assert isinstance(simplify(Div(x, const(4))), Div)


# ---- min / max -------------------------------------------------------------------------------
@pytest.mark.parametrize("before,after,bounds", [
    (Min(x, x), x, None), (Max(x, x), x, None),
    (Min(x, y), x, {x: (0, 3), y: (4, 10)}), (Max(x, y), y, {x: (0, 3), y: (4, 10)}),
    (Max(x, x + 1), x + 1, None), (Min(x - 1, x + 1), x - 1, None),
    (Min(i, n - 1), i, {i: (0, n - 1)}),
    (Min(Max(x, y), x), x, None), (Max(Min(x, y), x), x, None),
    (Min(Min(x, const(3)), const(5)), Min(x, const(3)), None),
])
def test_min_max(before, after, bounds):
    check(before, after, bounds)


# ---- comparisons, logic, select ----------------------------------------------------------------
@pytest.mark.parametrize("before,after,bounds", [
    (i < n, True, {i: (0, n - 1)}), (i >= n, False, {i: (0, n - 1)}),
    (i < 16, True, {i: (0, 15)}), (i < 15, i < 15, {i: (0, 15)}),
    (x + 1 > x, True, None), (x.equal(x), True, None), (i.equal(20), False, {i: (0, 15)}),
    (n >= 0, True, None),
])
def test_compare(before, after, bounds):
    check(before, after, bounds)


@pytest.mark.parametrize("before,after", [
    (b & True, b), (b & False, False), (b | True, True), (b | False, b), (b & b, b),
    (b & ~b, False), (b | ~b, True), (~~b, b),
])
def test_logic(before, after):
    check(before, after)


def test_not_of_compare_is_inverted():
    check(~(x < y), x >= y)


def test_select():
    check(Select(b, x, x), x)
    check(Select(~b, x, y), Select(b, y, x))
    check(Select(i < 16, x, y), x, {i: (0, 15)})
    # a constant condition broadcast to every lane (a vectorized select of an unrolled index)
    xs, ys = Ramp(x, 1, 4), Ramp(y, 1, 4)
    check(Select(Broadcast(const(True), 4), xs, ys), xs)
    check(Select(Broadcast(const(False), 4), xs, ys), ys)


# ---- casts, lets, vectors ----------------------------------------------------------------------
def test_cast_and_let():
    check(Cast(DType.parse("int32"), x), x)
    check(Let(k, const(3), k + x), x + 3)
    check(Let(k, x * y, x + 1), x + 1)


def test_vectors():
    check(Broadcast(x, 4) + Broadcast(y, 4), Broadcast(x + y, 4))
    check(Ramp(x, const(1), 4) + Broadcast(y, 4), Ramp(x + y, const(1), 4))
    check(Ramp(x, const(1), 4) * Broadcast(const(2), 4), Ramp(x * 2, const(2), 4))
    check(Ramp(x, const(0), 4), Broadcast(x, 4))
    check(FloorDiv(Ramp(i * 4, const(1), 4), Broadcast(const(4), 4)), Broadcast(i, 4))
    check(FloorMod(Ramp(i * 4, const(1), 4), Broadcast(const(4), 4)), Ramp(const(0), const(1), 4))
