"""Interval analysis: symbolic and constant bounds, regions for bound inference, Analyzer."""
import pytest

from compiler.arith import Analyzer, IntBound, bound_of, const_bound, eval_region, simplify
from compiler.ir import structural_equal
from compiler.ir.dtype import DType
from compiler.ir.errors import IRError
from compiler.tir import (
    Cast,
    FloorDiv,
    FloorMod,
    Max,
    Min,
    Range,
    Select,
    SizeVar,
    Var,
    const,
    decl_buffer,
)

i, j, x = Var("i"), Var("j"), Var("x")
n, m = SizeVar("n"), SizeVar("m")
R = Range.from_min_extent


def same(a, b):
    return structural_equal(simplify(a), simplify(b))


@pytest.mark.parametrize("e,ranges,lo,hi", [
    (i * 4 + j, {i: R(0, 4), j: R(0, 4)}, 0, 15),
    (i - j, {i: (0, 3), j: (1, 2)}, -2, 2),
    (i * j, {i: (-2, 3), j: (1, 2)}, -4, 6),
    (FloorDiv(i, const(4)), {i: (-5, 9)}, -2, 2),
    (FloorMod(i, const(4)), {i: (-5, 9)}, 0, 3),
    (FloorMod(i, const(8)), {i: (2, 5)}, 2, 5),
    (Min(i, j), {i: (0, 10), j: (3, 5)}, 0, 5),
    (Max(i, j), {i: (0, 10), j: (3, 5)}, 3, 10),
    (Select(x < 0, i, j), {i: (0, 10), j: (3, 15)}, 0, 15),
    (x, {}, None, None),
    (n, {}, 0, None),
    (Cast(DType.parse("int64"), i), {i: (1, 2)}, 1, 2),
    (Cast(DType.parse("int8"), x), {}, -128, 127),
])
def test_const_bound(e, ranges, lo, hi):
    assert const_bound(e, ranges) == IntBound(lo, hi)


def test_symbolic_bound():
    iv = bound_of(i + 1, {i: (0, n - 1)})
    assert same(iv.lo, const(1)) and same(iv.hi, n)
    iv = bound_of(i * 4 + j, {i: R(0, n), j: R(0, 4)})
    assert same(iv.lo, const(0)) and same(iv.hi, n * 4 - 1)
    # A variable without a range is a point; ranges whose ends use other ranged vars relax.
    iv = bound_of(j + m, {j: (0, i), i: (0, n - 1)})
    assert same(iv.lo, m) and same(iv.hi, n + m - 1)


def test_eval_region():
    region = eval_region([i * 4 + j, j], {i: R(0, n), j: R(0, 4)})
    assert same(region[0].min, const(0)) and same(region[0].extent, n * 4)
    assert same(region[1].min, const(0)) and same(region[1].extent, const(4))
    region = eval_region([i + 2], {i: R(x, 8)})
    assert same(region[0].min, x + 2) and same(region[0].extent, const(8))


def test_eval_region_of_data_dependent_index():
    B = decl_buffer((16,), "int32", "B")
    with pytest.raises(IRError, match="cannot bound"):
        eval_region([B[i]], {i: R(0, 16)})
    region = eval_region([B[i]], {i: R(0, 16)}, shape=[n])
    assert same(region[0].extent, n)


def test_analyzer():
    ana = Analyzer()
    ana.bind(i, R(0, 16))
    ana.bind(j, (0, n - 1))
    assert ana.can_prove(i < 16) and not ana.can_prove(i < 15)
    assert ana.can_prove(j < n)
    assert ana.can_prove_equal((i * 4 + 3) // 4, i)
    assert not ana.can_prove_equal(i, j)
    assert ana.const_int_bound(i * 2 + 1) == IntBound(1, 31)
    assert ana.const_int_bound(i).max_value == 15
    assert structural_equal(ana.simplify(FloorMod(i, const(16))), i)


def test_range_mentioning_its_own_var_is_a_point():
    iv = bound_of(i + 1, {i: (i, i)})
    assert same(iv.lo, i + 1) and same(iv.hi, i + 1)
