"""Canonical linear forms of integer expressions: `sum(coef * term) + const`.

`to_linear` reads an expression as a linear form (terms are the non-linear parts: variables,
divisions, casts, products of two non-constant factors); `from_linear` writes one back in the
canonical shape: positive terms by decreasing coefficient (then name), negative terms
subtracted, the constant last (`i*4 + j - k + 3`). Along the way `a//c*c + a%c` becomes `a`
and `a - a//c*c` becomes `a%c` (floor and truncating pairs alike).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from ..ir.dtype import DType
from ..tir import expr as E
from ..tir.const_fold import const_of
from .keys import KeyCache, order_key


class Linear:
    """Terms keyed structurally: key -> [term, coef]; plus an integer constant."""

    __slots__ = ("dtype", "terms", "const")

    def __init__(self, dtype: DType):
        self.dtype = dtype
        self.terms: Dict[object, List] = {}
        self.const = 0

    def add_term(self, key, term: E.PrimExpr, coef: int) -> None:
        slot = self.terms.get(key)
        if slot is None:
            if coef:
                self.terms[key] = [term, coef]
            return
        slot[1] += coef
        if slot[1] == 0:
            del self.terms[key]

    def add(self, other: "Linear", scale: int = 1) -> "Linear":
        for key, (t, c) in other.terms.items():
            self.add_term(key, t, c * scale)
        self.const += other.const * scale
        return self

    def is_const(self) -> bool:
        return not self.terms

    def single_term(self) -> Optional[Tuple[E.PrimExpr, int]]:
        if len(self.terms) == 1 and self.const == 0:
            (t, c), = self.terms.values()
            return t, c
        return None


def is_linear_dtype(d: DType) -> bool:
    return d.is_integer and d.lanes == 1


def to_linear(e: E.PrimExpr, keys: KeyCache) -> Linear:
    out = Linear(e.dtype)
    _read(e, 1, out, keys)
    _merge_div_mod(out, keys)
    return out


def _read(e: E.PrimExpr, scale: int, out: Linear, keys: KeyCache) -> None:
    if isinstance(e, E.IntImm) and e.dtype == out.dtype:
        out.const += e.value * scale
    elif isinstance(e, E.Add) and e.dtype == out.dtype:
        _read(e.a, scale, out, keys)
        _read(e.b, scale, out, keys)
    elif isinstance(e, E.Sub) and e.dtype == out.dtype:
        _read(e.a, scale, out, keys)
        _read(e.b, -scale, out, keys)
    elif isinstance(e, E.Mul) and e.dtype == out.dtype:
        la, lb = Linear(out.dtype), Linear(out.dtype)
        _read(e.a, 1, la, keys)
        _read(e.b, 1, lb, keys)
        if la.is_const():
            out.add(lb, scale * la.const)
        elif lb.is_const():
            out.add(la, scale * lb.const)
        else:
            (ta, ka), (tb, kb) = _factor(la, e.a), _factor(lb, e.b)
            if order_key(tb) < order_key(ta):
                ta, tb = tb, ta
            term = E.Mul(ta, tb)
            out.add_term(keys.key(term), term, scale * ka * kb)
    else:
        out.add_term(keys.key(e), e, scale)


def _factor(lin: Linear, original: E.PrimExpr) -> Tuple[E.PrimExpr, int]:
    """`(term, k)` with `lin == k * term`, pulling out the coefficient of a single term."""
    single = lin.single_term()
    if single is not None:
        return single
    return from_linear(lin), 1


def _merge_div_mod(lin: Linear, keys: KeyCache) -> None:
    """`x//c*(k*c) + x%c*k -> x*k` and `x*k - x//c*(k*c) -> x%c*k` (floor and trunc pairs)."""
    pairs = {E.FloorMod: E.FloorDiv, E.Mod: E.Div}
    for _ in range(8):
        changed = False
        for key, (t, k) in list(lin.terms.items()):
            if key not in lin.terms or type(t) not in pairs or not isinstance(t.b, E.IntImm):
                continue
            c = t.b.value
            div = pairs[type(t)](t.a, t.b)
            dkey = keys.key(div)
            slot = lin.terms.get(dkey)
            if slot is None and (merged := _nested_quotient(div)) is not None:
                # (y // a) % c beside y // (a*c): the simplifier folds (y // a) // c so
                dkey = keys.key(merged)
                slot = lin.terms.get(dkey)
            if slot is not None and slot[1] == k * c:
                del lin.terms[key], lin.terms[dkey]
                lin.add(to_linear(t.a, keys), k)
                changed = True
        for key, (t, q) in list(lin.terms.items()):
            if key not in lin.terms or type(t) not in (E.FloorDiv, E.Div) \
                    or not isinstance(t.b, E.IntImm) or t.b.value == 0 or q % t.b.value:
                continue
            k = -q // t.b.value
            x = to_linear(t.a, keys)
            if x.is_const() or not all(
                    (s := lin.terms.get(xk)) is not None and s[1] == k * xc
                    for xk, (_, xc) in x.terms.items()):
                continue
            del lin.terms[key]
            lin.add(x, -k)
            mod = (E.FloorMod if isinstance(t, E.FloorDiv) else E.Mod)(t.a, t.b)
            lin.add_term(keys.key(mod), mod, k)
            changed = True
        if not changed:
            return


def _nested_quotient(div: E.PrimExpr) -> Optional[E.PrimExpr]:
    """`y // (a*c)` for `div` = `(y // a) // c` with positive constants a and c (floor or
    truncating alike: both nest so), else None."""
    inner = div.a
    if type(inner) is not type(div) or not isinstance(inner.b, E.IntImm) \
            or inner.b.value <= 0 or div.b.value <= 0:
        return None
    return type(div)(inner.a, const_of(inner.b.dtype, inner.b.value * div.b.value))


def _signed(dtype: DType, v: int) -> int:
    """A coefficient reduced modulo 2**bits into the signed range (sound for +, -, *)."""
    bits = dtype.bits
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def from_linear(lin: Linear, built: Optional[Callable[[E.PrimExpr], None]] = None
                ) -> E.PrimExpr:
    """The canonical expression of `lin`; `built` is told of every Add/Sub/Mul node made here
    (they are canonical, so a simplifier may memoise them as already simplified)."""
    d = lin.dtype
    built = built or (lambda node: None)
    items = [(t, _signed(d, c)) for t, c in lin.terms.values()]
    items = [(t, c) for t, c in items if c]
    const = _signed(d, lin.const)
    pos = sorted((x for x in items if x[1] > 0), key=lambda x: (-x[1], order_key(x[0])))
    neg = sorted((x for x in items if x[1] < 0), key=lambda x: (x[1], order_key(x[0])))

    def make(cls, a, b):
        node = cls(a, b)
        built(node)
        return node

    def scaled(t, c):
        return t if c == 1 else make(E.Mul, t, const_of(d, c))

    if pos:
        acc = scaled(*pos[0])
        for t, c in pos[1:]:
            acc = make(E.Add, acc, scaled(t, c))
    elif const:
        acc, const = const_of(d, const), 0
    elif neg:
        t, c = neg.pop(0)
        acc = make(E.Mul, t, const_of(d, c))
    else:
        return const_of(d, const)
    for t, c in neg:
        acc = make(E.Sub, acc, scaled(t, -c))
    if const > 0:
        acc = make(E.Add, acc, const_of(d, const))
    elif const < 0:
        acc = make(E.Sub, acc, const_of(d, -const))
    return acc


def canonical(e: E.PrimExpr, keys: KeyCache,
              built: Optional[Callable[[E.PrimExpr], None]] = None) -> E.PrimExpr:
    """The canonical linear form of an integer expression (see `from_linear` for `built`)."""
    return from_linear(to_linear(e, keys), built)
