"""A tiny reference evaluator of integer/boolean expressions, the oracle of the simplifier tests.

Integers are Python ints (tests keep values small enough that no dtype overflows)."""
from compiler.tir import expr as E


class DivByZero(Exception):
    pass


def _tdiv(a, b):
    if b == 0:
        raise DivByZero
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _fdiv(a, b):
    if b == 0:
        raise DivByZero
    return a // b


def _fmod(a, b):
    if b == 0:
        raise DivByZero
    return a % b


_BIN = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.Div: _tdiv, E.Mod: lambda a, b: a - b * _tdiv(a, b), E.FloorDiv: _fdiv,
    E.FloorMod: _fmod, E.Min: min, E.Max: max,
    E.EQ: lambda a, b: int(a == b), E.NE: lambda a, b: int(a != b),
    E.LT: lambda a, b: int(a < b), E.LE: lambda a, b: int(a <= b),
    E.GT: lambda a, b: int(a > b), E.GE: lambda a, b: int(a >= b),
    E.And: lambda a, b: int(bool(a) and bool(b)), E.Or: lambda a, b: int(bool(a) or bool(b)),
}


def evaluate(e, env):
    """The value of `e` with variables taken from `env` (a dict keyed by Var)."""
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    if isinstance(e, E.Not):
        return int(not evaluate(e.a, env))
    if isinstance(e, E.Select):
        return evaluate(e.true_value if evaluate(e.condition, env) else e.false_value, env)
    if isinstance(e, E.Let):
        return evaluate(e.body, {**env, e.var: evaluate(e.value, env)})
    if isinstance(e, E.Cast):
        return evaluate(e.value, env)
    fn = _BIN.get(type(e))
    if fn is None:
        raise TypeError(f"evaluator does not know {type(e).__name__}")
    return fn(evaluate(e.a, env), evaluate(e.b, env))
