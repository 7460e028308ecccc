"""The simplifier's rewrite rules, as named tables of `Rule(name, pattern, replacement, guard)`.

Order matters only for speed: the driver (simplify.py) tries the rules of a node's class in
table order and restarts on the new node after any rule fires, until none applies. Every rule
must make the expression simpler (fewer nodes, or canonical), so the driver terminates.
Guards ask the driver's context (`m.ctx`) about bounds: `le(a, b)`, `lt(a, b)`, `ge0(e)`,
`int_bound(e)`.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional

from ..tir import expr as E
from ..tir.const_fold import fold
from ..tir.functor import collect_vars, substitute
from .linear import Linear, canonical, from_linear, is_linear_dtype, to_linear
from .pattern import PAny, PConst, PVar, Rule, pdiv, peq, pmax, pmin, pmod, pne, pselect

x, y, z, c = PVar("x"), PVar("y"), PVar("z"), PVar("c")
c1, c2 = PConst("c1"), PConst("c2")


def _int(m) -> bool:
    return m.e.dtype.is_integer and m.e.dtype.lanes == 1


def _pos(*names):
    return lambda m: all(isinstance(m.binds[n], E.IntImm) and m.binds[n].value > 0 for n in names)


_FOLDABLE = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ,
             E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or, E.Not, E.Select, E.Cast)

CONST_FOLD = [
    Rule("fold_constants", PAny(*_FOLDABLE), lambda m: fold(m.e)),
]

IDENTITY = [
    Rule("add_zero", x + 0, x),
    Rule("sub_zero", x - 0, x),
    Rule("mul_one", x * 1, x),
    Rule("mul_zero_int", x * 0, 0, guard=lambda m: m.e.dtype.is_integer),
    Rule("div_one", pdiv(x, 1), x),
]

LINEAR = [
    Rule("canonical_linear_form", PAny(E.Add, E.Sub, E.Mul),
         lambda m: canonical(m.e, m.ctx.keys, m.ctx.mark_simplified),
         guard=lambda m: is_linear_dtype(m.e.dtype)),
]


# ---- division and remainder -----------------------------------------------------------------
def _divide_out(lin: Linear, k: int):
    """(q, r) with lin == q*k + r: q the terms whose coefficients k divides (divided) and the
    constant's floor quotient, r the other terms and the constant's remainder in [0, k)."""
    q, r = Linear(lin.dtype), Linear(lin.dtype)
    for key, (t, coef) in lin.terms.items():
        if coef % k == 0:
            q.add_term(key, t, coef // k)
        else:
            r.add_term(key, t, coef)
    q.const, r.const = lin.const // k, lin.const % k
    return q, r


def _split_div(m) -> Optional[E.PrimExpr]:
    """(q*c + r) // c -> q + r // c (floor semantics make this exact)."""
    q, r = _divide_out(to_linear(m.x, m.ctx.keys), m.c1.value)
    if q.is_const() and q.const == 0:
        return None
    return E.Add(from_linear(q), E.FloorDiv(from_linear(r), m.c1))


def _split_mod(m) -> Optional[E.PrimExpr]:
    """(q*c + r) % c -> r % c."""
    k = m.c1.value
    lin = to_linear(m.x, m.ctx.keys)
    r = Linear(lin.dtype)
    for key, (t, coef) in lin.terms.items():
        if coef % k:
            r.add_term(key, t, coef)
    r.const = lin.const % k
    if len(r.terms) == len(lin.terms) and r.const == lin.const:
        return None
    return E.FloorMod(from_linear(r), m.c1)


def _scaled_parts(m):
    """(big, small, s) with x == big*s + small, s a divisor of c (1 < s < c), every term of
    `big` integral and 0 <= small < s by the context's bounds: the largest such s; else None.
    (A fused loop index split again, `(f*14 + i) // 28` with i in [0, 14), is `f // 2`.)"""
    k = m.c1.value
    lin = to_linear(m.x, m.ctx.keys)
    # the best s for a set of terms in `big` is the gcd of k and their coefficients: the gcds
    # of k with each coefficient, closed under gcd
    steps = {math.gcd(k, coef) for _, coef in lin.terms.values()}
    while True:
        more = {math.gcd(a, b) for a in steps for b in steps} - steps
        if not more:
            break
        steps |= more
    for s in sorted(steps, reverse=True):
        if not 1 < s < k:
            continue
        big, small = _divide_out(lin, s)
        if big.is_const() or (small.is_const() and small.const == 0):
            continue    # nothing to divide out, or nothing to drop (_split_div's case)
        lo, hi = m.ctx.int_bound(from_linear(small))
        if lo is not None and hi is not None and 0 <= lo and hi < s:
            return from_linear(big), from_linear(small), s
    return None


def _div_scaled(m) -> Optional[E.PrimExpr]:
    """(big*s + small) // c -> big // (c/s) when 0 <= small < s and s divides c."""
    parts = _scaled_parts(m)
    if parts is None:
        return None
    big, _, s = parts
    return E.FloorDiv(big, E.make_const(m.c1.dtype, m.c1.value // s))


def _mod_scaled(m) -> Optional[E.PrimExpr]:
    """(big*s + small) % c -> (big % (c/s))*s + small when 0 <= small < s and s divides c."""
    parts = _scaled_parts(m)
    if parts is None:
        return None
    big, small, s = parts
    mod = E.FloorMod(big, E.make_const(m.c1.dtype, m.c1.value // s))
    return E.Add(E.Mul(mod, E.make_const(m.e.dtype, s)), small)


def _div_by_bound(m) -> Optional[E.PrimExpr]:
    """x // c is constant when all of x's range lies in one multiple of c."""
    lo, hi = m.ctx.int_bound(m.x)
    k = m.c1.value
    if lo is None or hi is None or lo // k != hi // k:
        return None
    return E.make_const(m.e.dtype, lo // k)


def _mod_by_bound(m) -> Optional[E.PrimExpr]:
    """x % c -> x - q*c when all of x's range lies in [q*c, q*c + c)."""
    lo, hi = m.ctx.int_bound(m.x)
    k = m.c1.value
    if lo is None or hi is None or lo // k != hi // k:
        return None
    return E.binary(E.Sub, m.x, (lo // k) * k)


def _divides(a: str, b: str):
    return lambda m: m.binds[b].value % m.binds[a].value == 0


DIV_MOD = [
    Rule("floordiv_one", x // 1, x),
    Rule("floormod_one", x % 1, 0, guard=_int),
    Rule("truncmod_one", pmod(x, 1), 0, guard=_int),
    Rule("truncdiv_nonneg_is_floordiv", pdiv(x, c1), x // c1,
         guard=lambda m: _int(m) and _pos("c1")(m) and m.ctx.ge0(m.x)),
    Rule("truncmod_nonneg_is_floormod", pmod(x, c1), x % c1,
         guard=lambda m: _int(m) and _pos("c1")(m) and m.ctx.ge0(m.x)),
    Rule("floordiv_by_bound", x // c1, _div_by_bound, guard=lambda m: _int(m) and _pos("c1")(m)),
    Rule("floormod_by_bound", x % c1, _mod_by_bound, guard=lambda m: _int(m) and _pos("c1")(m)),
    Rule("floordiv_split_multiples", x // c1, _split_div,
         guard=lambda m: _int(m) and _pos("c1")(m)),
    Rule("floormod_drop_multiples", x % c1, _split_mod,
         guard=lambda m: _int(m) and _pos("c1")(m)),
    Rule("floordiv_scaled_index", x // c1, _div_scaled,
         guard=lambda m: _int(m) and _pos("c1")(m) and isinstance(m.x, (E.Add, E.Sub))),
    Rule("floormod_scaled_index", x % c1, _mod_scaled,
         guard=lambda m: _int(m) and _pos("c1")(m) and isinstance(m.x, (E.Add, E.Sub))),
    Rule("floordiv_floordiv", (x // c1) // c2, x // (c1 * c2), guard=_pos("c1", "c2")),
    Rule("floormod_floormod", (x % c1) % c2, x % c2,
         guard=lambda m: _pos("c1", "c2")(m) and _divides("c2", "c1")(m)),
    Rule("floordiv_of_floormod", (x % c1) // c2, (x // c2) % (c1 // c2),
         guard=lambda m: _pos("c1", "c2")(m) and _divides("c2", "c1")(m)),
    Rule("floordiv_mul", (x * c1) // c2, x // (c2 // c1),
         guard=lambda m: _pos("c1", "c2")(m) and _divides("c1", "c2")(m)),
    Rule("floormod_mul", (x * c1) % c2, (x % (c2 // c1)) * c1,
         guard=lambda m: _pos("c1", "c2")(m) and _divides("c1", "c2")(m)),
]


# ---- min / max ------------------------------------------------------------------------------
def _min_by_bound(m) -> Optional[E.PrimExpr]:
    if m.ctx.le(m.x, m.y):
        return m.x
    if m.ctx.le(m.y, m.x):
        return m.y
    return None


def _max_by_bound(m) -> Optional[E.PrimExpr]:
    if m.ctx.le(m.x, m.y):
        return m.y
    if m.ctx.le(m.y, m.x):
        return m.x
    return None


MIN_MAX = [
    Rule("min_self", pmin(x, x), x),
    Rule("max_self", pmax(x, x), x),
    Rule("min_by_bound", pmin(x, y), _min_by_bound, guard=_int),
    Rule("max_by_bound", pmax(x, y), _max_by_bound, guard=_int),
    Rule("min_absorbs_max", pmin(pmax(x, y), x), x),
    Rule("max_absorbs_min", pmax(pmin(x, y), x), x),
    Rule("min_min_repeat", pmin(pmin(x, y), y), pmin(x, y)),
    Rule("max_max_repeat", pmax(pmax(x, y), y), pmax(x, y)),
    Rule("min_min_constants", pmin(pmin(x, c1), c2), pmin(x, pmin(c1, c2))),
    Rule("max_max_constants", pmax(pmax(x, c1), c2), pmax(x, pmax(c1, c2))),
]


# ---- comparisons and logic ------------------------------------------------------------------
def _decide_compare(m) -> Optional[E.PrimExpr]:
    """a op b decided by the interval of a - b."""
    e = m.e
    if not is_linear_dtype(e.a.dtype):
        return None
    lo, hi = m.ctx.int_bound(E.Sub(e.a, e.b))
    verdict = None
    if isinstance(e, E.LT):
        verdict = True if hi is not None and hi < 0 else False if lo is not None and lo >= 0 \
            else None
    elif isinstance(e, E.LE):
        verdict = True if hi is not None and hi <= 0 else False if lo is not None and lo > 0 \
            else None
    elif isinstance(e, E.GT):
        verdict = True if lo is not None and lo > 0 else False if hi is not None and hi <= 0 \
            else None
    elif isinstance(e, E.GE):
        verdict = True if lo is not None and lo >= 0 else False if hi is not None and hi < 0 \
            else None
    else:
        if lo == 0 and hi == 0:
            verdict = isinstance(e, E.EQ)
        elif (lo is not None and lo > 0) or (hi is not None and hi < 0):
            verdict = isinstance(e, E.NE)
    return None if verdict is None else E.make_const(e.dtype, verdict)


_NEGATED = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}


def _not_compare(m) -> Optional[E.PrimExpr]:
    inner = m.e.a
    if type(inner) in _NEGATED and (inner.a.dtype.is_integer or type(inner) in (E.EQ, E.NE)):
        return _NEGATED[type(inner)](inner.a, inner.b)
    return None


COMPARE = [
    Rule("compare_by_bound", PAny(E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE), _decide_compare),
    Rule("eq_self_int", peq(x, x), True, guard=lambda m: m.e.a.dtype.is_integer),
    Rule("ne_self_int", pne(x, x), False, guard=lambda m: m.e.a.dtype.is_integer),
]

LOGIC = [
    Rule("and_true", x & True, x),
    Rule("and_false", x & False, False),
    Rule("or_true", x | True, True),
    Rule("or_false", x | False, x),
    Rule("and_self", x & x, x),
    Rule("or_self", x | x, x),
    Rule("and_not_self", x & ~x, False),
    Rule("or_not_self", x | ~x, True),
    Rule("not_not", ~~x, x),
    Rule("not_compare", PAny(E.Not), _not_compare),
]

SELECT = [
    Rule("select_same_branches", pselect(c, x, x), x),
    Rule("select_not_condition", pselect(~c, x, y), pselect(c, y, x)),
]


# ---- casts, lets, vectors -------------------------------------------------------------------
def _cast_noop(m) -> Optional[E.PrimExpr]:
    return m.e.value if m.e.value.dtype == m.e.dtype else None


def _cast_broadcast(m) -> Optional[E.PrimExpr]:
    v = m.e.value
    if isinstance(v, E.Broadcast):
        return E.Broadcast(E.cast(m.e.dtype.element_of(), v.value), v.lanes)
    return None


def _let_inline(m) -> Optional[E.PrimExpr]:
    e = m.e
    if isinstance(e.value, (E.IntImm, E.FloatImm, E.Var)):
        return substitute(e.body, {e.var: e.value})
    if not any(v is e.var for v in collect_vars(e.body)):
        return e.body
    return None


def _vector_binary(m) -> Optional[E.PrimExpr]:
    e = m.e
    a, b = e.a, e.b
    if isinstance(a, E.Broadcast) and isinstance(b, E.Broadcast) and a.lanes == b.lanes:
        return E.Broadcast(type(e)(a.value, b.value), a.lanes)
    if isinstance(e, (E.Add, E.Sub)):
        if isinstance(a, E.Ramp) and isinstance(b, E.Ramp) and a.lanes == b.lanes:
            return E.Ramp(type(e)(a.base, b.base), type(e)(a.stride, b.stride), a.lanes)
        if isinstance(a, E.Ramp) and isinstance(b, E.Broadcast) and a.lanes == b.lanes:
            return E.Ramp(type(e)(a.base, b.value), a.stride, a.lanes)
        if isinstance(a, E.Broadcast) and isinstance(b, E.Ramp) and a.lanes == b.lanes:
            stride = b.stride if isinstance(e, E.Add) else E.Sub(
                E.make_const(b.stride.dtype, 0), b.stride)
            return E.Ramp(type(e)(a.value, b.base), stride, a.lanes)
    if isinstance(e, E.Mul):
        ramp, bc = (a, b) if isinstance(a, E.Ramp) else (b, a)
        if isinstance(ramp, E.Ramp) and isinstance(bc, E.Broadcast) and ramp.lanes == bc.lanes:
            return E.Ramp(E.Mul(ramp.base, bc.value), E.Mul(ramp.stride, bc.value), ramp.lanes)
    if isinstance(e, (E.FloorDiv, E.FloorMod)) and isinstance(a, E.Ramp) \
            and isinstance(b, E.Broadcast) and isinstance(b.value, E.IntImm) \
            and isinstance(a.stride, E.IntImm) and b.value.value > 0 and a.stride.value >= 0:
        k, span = b.value, a.stride.value * (a.lanes - 1)
        if m.ctx.lt(E.Add(E.FloorMod(a.base, k), E.make_const(k.dtype, span)), k):
            if isinstance(e, E.FloorDiv):
                return E.Broadcast(E.FloorDiv(a.base, k), a.lanes)
            return E.Ramp(E.FloorMod(a.base, k), a.stride, a.lanes)
    return None


def _ramp_zero_stride(m) -> Optional[E.PrimExpr]:
    e = m.e
    return E.Broadcast(e.base, e.lanes) if E.is_const_int(e.stride, 0) else None


CAST = [
    Rule("cast_to_same_dtype", PAny(E.Cast), _cast_noop),
    Rule("cast_of_broadcast", PAny(E.Cast), _cast_broadcast),
]

LET = [
    Rule("let_inline_simple_or_unused", PAny(E.Let), _let_inline),
]

_VECTOR_OPS = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ,
               E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or)
VECTOR = [
    Rule("vector_broadcast_ramp_arith", PAny(*_VECTOR_OPS), _vector_binary,
         guard=lambda m: m.e.dtype.lanes > 1),
    Rule("ramp_zero_stride", PAny(E.Ramp), _ramp_zero_stride),
]

TABLES: Dict[str, List[Rule]] = {
    "const_fold": CONST_FOLD, "identity": IDENTITY, "vector": VECTOR, "linear": LINEAR,
    "div_mod": DIV_MOD, "min_max": MIN_MAX, "compare": COMPARE, "logic": LOGIC,
    "select": SELECT, "cast": CAST, "let": LET,
}


def rules_by_class() -> Dict[type, List[Rule]]:
    """Every rule of every table, indexed by the class of node its pattern's root matches."""
    out: Dict[type, List[Rule]] = {}
    for table in TABLES.values():
        for rule in table:
            for cls in rule.root_classes():
                out.setdefault(cls, []).append(rule)
    return out
