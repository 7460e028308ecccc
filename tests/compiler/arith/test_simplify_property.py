"""Property tests: simplification keeps the value of random integer expressions under random
bindings within the given bounds, and is idempotent."""
from arith_evaluator import DivByZero, evaluate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.arith import const_bound, simplify
from compiler.ir.structural_equal import structural_equal
from compiler.tir import Div, FloorDiv, FloorMod, Max, Min, Mod, Select, Var, const

VARS = [Var("x"), Var("y"), Var("z")]
_OPS = ["add", "sub", "mul", "floordiv", "floormod", "div", "mod", "min", "max", "select"]


def _build(op, a, b, c, k):
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * (k if abs(k) < 4 else b)
    if op == "floordiv":
        return FloorDiv(a, const(k))
    if op == "floormod":
        return FloorMod(a, const(k))
    if op == "div":
        return Div(a, const(k))
    if op == "mod":
        return Mod(a, const(k))
    if op == "min":
        return Min(a, b)
    if op == "max":
        return Max(a, b)
    return Select(a < b, b, c)


_leaf = st.one_of(st.sampled_from(VARS), st.integers(-9, 9).map(const))
_nonzero = st.integers(-8, 8).filter(lambda v: v != 0)


def _extend(children):
    return st.builds(_build, st.sampled_from(_OPS), children, children, children, _nonzero)


exprs = st.recursive(_leaf, _extend, max_leaves=10)


@st.composite
def bounded(draw):
    bounds = {}
    for v in VARS:
        lo = draw(st.integers(-20, 20))
        bounds[v] = (lo, lo + draw(st.integers(0, 20)))
    return bounds


def _values(draw, bounds):
    return {v: draw(st.integers(lo, hi)) for v, (lo, hi) in bounds.items()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs, bounded(), st.data())
def test_simplify_keeps_value(e, bounds, data):
    s = simplify(e, bounds)
    for _ in range(4):
        env = _values(data.draw, bounds)
        try:
            want = evaluate(e, env)
        except DivByZero:
            return
        assert evaluate(s, env) == want, f"{e}  =>  {s}  at {env}"


@settings(max_examples=150, deadline=None)
@given(exprs, st.data())
def test_simplify_keeps_value_unbounded(e, data):
    s = simplify(e)
    env = {v: data.draw(st.integers(-50, 50)) for v in VARS}
    try:
        want = evaluate(e, env)
    except DivByZero:
        return
    assert evaluate(s, env) == want, f"{e}  =>  {s}  at {env}"


@settings(max_examples=150, deadline=None)
@given(exprs, bounded())
def test_simplify_is_idempotent(e, bounds):
    once = simplify(e, bounds)
    twice = simplify(once, bounds)
    assert structural_equal(once, twice), f"{e}: {once}  then  {twice}"


@settings(max_examples=150, deadline=None)
@given(exprs, bounded(), st.data())
def test_const_bound_contains_values(e, bounds, data):
    lo, hi = const_bound(e, bounds)
    env = _values(data.draw, bounds)
    try:
        v = evaluate(e, env)
    except DivByZero:
        return
    assert lo is None or lo <= v, f"{e}: {v} < {lo}"
    assert hi is None or v <= hi, f"{e}: {v} > {hi}"
