"""Patterns over expressions and the `Rule` record the simplifier's tables are made of.

A pattern is built with Python operators on pattern variables, the way the rewrite tables read:

    x, y, c1 = PVar("x"), PVar("y"), PConst("c1")
    Rule("add_zero", x + 0, x)
    Rule("min_self", pmin(x, x), x)
    Rule("floordiv_one", x // 1, x)

`PVar` matches any expression (the same name twice must match structurally equal expressions),
`PConst` only a scalar constant, a Python number a constant of that value. A replacement is a
pattern (instantiated with the bindings) or a function of the `Match` returning an expression or
None (rule does not apply). A guard is a function of the `Match` returning a bool.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple, Union

from ..tir import expr as E

_COMMUTATIVE = (E.Add, E.Mul, E.Min, E.Max, E.EQ, E.NE, E.And, E.Or)


class Pattern:
    """Base of patterns; operators build bigger patterns."""

    def match(self, e: E.PrimExpr, binds: Dict[str, Any], equal) -> bool:
        raise NotImplementedError

    def build(self, binds: Dict[str, Any], like: E.PrimExpr) -> E.PrimExpr:
        raise NotImplementedError

    def __add__(self, o):
        return POp(E.Add, self, _p(o))

    def __radd__(self, o):
        return POp(E.Add, _p(o), self)

    def __sub__(self, o):
        return POp(E.Sub, self, _p(o))

    def __rsub__(self, o):
        return POp(E.Sub, _p(o), self)

    def __mul__(self, o):
        return POp(E.Mul, self, _p(o))

    def __rmul__(self, o):
        return POp(E.Mul, _p(o), self)

    def __floordiv__(self, o):
        return POp(E.FloorDiv, self, _p(o))

    def __mod__(self, o):
        return POp(E.FloorMod, self, _p(o))

    def __lt__(self, o):
        return POp(E.LT, self, _p(o))

    def __le__(self, o):
        return POp(E.LE, self, _p(o))

    def __gt__(self, o):
        return POp(E.GT, self, _p(o))

    def __ge__(self, o):
        return POp(E.GE, self, _p(o))

    def __and__(self, o):
        return POp(E.And, self, _p(o))

    def __or__(self, o):
        return POp(E.Or, self, _p(o))

    def __invert__(self):
        return POp(E.Not, self)

    __hash__ = object.__hash__


def _p(v) -> Pattern:
    if isinstance(v, Pattern):
        return v
    if isinstance(v, (bool, int, float)):
        return PLit(v)
    raise TypeError(f"not a pattern: {v!r}")


class PVar(Pattern):
    """Any expression (of any dtype unless `kind` restricts it: "int", "float", "bool")."""

    def __init__(self, name: str, kind: Optional[str] = None):
        self.name, self.kind = name, kind

    def _kind_ok(self, e: E.PrimExpr) -> bool:
        d = e.dtype
        if self.kind is None:
            return True
        return {"int": d.is_integer, "float": d.is_float, "bool": d.is_bool}[self.kind]

    def match(self, e, binds, equal) -> bool:
        if not self._kind_ok(e):
            return False
        old = binds.get(self.name)
        if old is None:
            binds[self.name] = e
            return True
        return equal(old, e)

    def build(self, binds, like):
        return binds[self.name]


class PConst(PVar):
    """A scalar constant (IntImm or FloatImm)."""

    def match(self, e, binds, equal) -> bool:
        if not isinstance(e, (E.IntImm, E.FloatImm)):
            return False
        return PVar.match(self, e, binds, equal)


class PLit(Pattern):
    """A constant of a given value."""

    def __init__(self, value):
        self.value = value

    def match(self, e, binds, equal) -> bool:
        return isinstance(e, (E.IntImm, E.FloatImm)) and e.value == self.value

    def build(self, binds, like):
        return E.make_const(like.dtype, self.value)


class POp(Pattern):
    """A node of class `cls` whose operands match `args` (both orders for commutative ops)."""

    def __init__(self, cls, *args: Pattern):
        self.cls, self.args = cls, tuple(args)

    def match(self, e, binds, equal) -> bool:
        if type(e) is not self.cls:
            return False
        kids = _operands(e)
        saved = dict(binds)
        if all(p.match(k, binds, equal) for p, k in zip(self.args, kids)):
            return True
        if self.cls in _COMMUTATIVE:
            binds.clear()
            binds.update(saved)
            if all(p.match(k, binds, equal) for p, k in zip(self.args, reversed(kids))):
                return True
        binds.clear()
        binds.update(saved)
        return False

    def build(self, binds, like):
        kids = [a.build(binds, like) for a in self.args]
        # Literals take the dtype of their sibling operand.
        kids = [E.make_const(_sibling(kids, i).dtype, a.value) if isinstance(a, PLit) else k
                for i, (a, k) in enumerate(zip(self.args, kids))]
        if self.cls is E.Not:
            return E.Not(kids[0])
        if self.cls is E.Select:
            return E.Select(*kids)
        return E.binary(self.cls, kids[0], kids[1])


def _sibling(kids, i):
    return kids[1 - i] if len(kids) == 2 else kids[i]


def _operands(e) -> Tuple[E.PrimExpr, ...]:
    if isinstance(e, E.BinaryOp):
        return (e.a, e.b)
    if isinstance(e, E.Not):
        return (e.a,)
    if isinstance(e, E.Select):
        return (e.condition, e.true_value, e.false_value)
    if isinstance(e, E.Cast):
        return (e.value,)
    return ()


def pmin(a, b) -> POp:
    return POp(E.Min, _p(a), _p(b))


def pmax(a, b) -> POp:
    return POp(E.Max, _p(a), _p(b))


def pselect(c, a, b) -> POp:
    return POp(E.Select, _p(c), _p(a), _p(b))


def pdiv(a, b) -> POp:
    """Truncating division (C's /)."""
    return POp(E.Div, _p(a), _p(b))


def pmod(a, b) -> POp:
    """Truncating remainder (C's %)."""
    return POp(E.Mod, _p(a), _p(b))


def peq(a, b) -> POp:
    return POp(E.EQ, _p(a), _p(b))


def pne(a, b) -> POp:
    return POp(E.NE, _p(a), _p(b))


class PAny(Pattern):
    """Any node of the given classes (the rule's replacement function does the work)."""

    def __init__(self, *classes):
        self.classes = classes

    def match(self, e, binds, equal) -> bool:
        if type(e) in self.classes:
            binds["e"] = e
            return True
        return False


class Match:
    """The bindings of a successful match (`m.x`), the matched expression (`m.e`) and the
    simplifier context (`m.ctx`, for bound queries)."""

    __slots__ = ("binds", "e", "ctx")

    def __init__(self, binds: Dict[str, Any], e: E.PrimExpr, ctx: Any):
        self.binds, self.e, self.ctx = binds, e, ctx

    def __getattr__(self, name: str):
        try:
            return self.binds[name]
        except KeyError:
            raise AttributeError(name) from None


Replacement = Union[Pattern, Callable[[Match], Optional[E.PrimExpr]]]


@dataclass(frozen=True)
class Rule:
    """One rewrite: where `pattern` matches and `guard` holds, the node becomes `replacement`."""

    name: str
    pattern: Pattern
    replacement: Replacement
    guard: Optional[Callable[[Match], bool]] = None

    def __post_init__(self):
        if isinstance(self.replacement, (bool, int, float)):
            object.__setattr__(self, "replacement", PLit(self.replacement))

    def root_classes(self) -> Tuple[type, ...]:
        p = self.pattern
        if isinstance(p, POp):
            return (p.cls,)
        if isinstance(p, PAny):
            return tuple(p.classes)
        return ()

    def apply(self, e: E.PrimExpr, ctx: Any, equal) -> Optional[E.PrimExpr]:
        binds: Dict[str, Any] = {}
        if not self.pattern.match(e, binds, equal):
            return None
        m = Match(binds, e, ctx)
        if self.guard is not None and not self.guard(m):
            return None
        if isinstance(self.replacement, Pattern):
            if isinstance(self.replacement, PLit):
                return E.make_const(e.dtype, self.replacement.value)
            return self.replacement.build(binds, e)
        return self.replacement(m)
