"""Integer vector expressions as a scalar plus constant lane offsets: the index of a vector
load whose lanes read a fixed pattern around one address (`(ramp(0, 1, 16) // 8) * 8 + r`,
the lanes of a block arranged by groups), which the vectorizer keeps as one vector load and
the LLVM codegen emits as a contiguous load and a shuffle."""
from __future__ import annotations

import math

from . import expr as E


def known_multiple(e) -> int:
    """A number every value of the integer expression `e` is a multiple of (0: e is 0)."""
    if isinstance(e, E.IntImm):
        return abs(e.value)
    if isinstance(e, (E.Add, E.Sub)):
        return math.gcd(known_multiple(e.a), known_multiple(e.b))
    if isinstance(e, E.Mul):
        return known_multiple(e.a) * known_multiple(e.b)
    return 1


def lane_offsets(index):
    """(scalar S, [c_0, ..., c_{n-1}]) when lane i of the integer vector `index` is S + c_i
    with every c_i a constant (a ramp of constant stride, broadcasts, and sums, constant
    multiples and floor division / modulo by a constant of such, where S is a known multiple
    of the divisor), else None: `(ramp(0, 1, 16) // 8) * 8 + r` is (r, [0]*8 + [8]*8)."""
    if isinstance(index, E.Broadcast):
        return (index.value, [0] * index.lanes) if index.value.dtype.lanes == 1 else None
    if isinstance(index, E.Ramp):
        if not isinstance(index.stride, E.IntImm):
            return None
        return index.base, [i * index.stride.value for i in range(index.lanes)]
    if isinstance(index, (E.Add, E.Sub)):
        a, b = lane_offsets(index.a), lane_offsets(index.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(index, E.Add) else -1
        return _sum(a[0], b[0], sign), [x + sign * y for x, y in zip(a[1], b[1])]
    kind, operand, k = _by_constant(index)
    if kind is None:
        return None
    a = lane_offsets(operand)
    if a is None:
        return None
    if kind == "mul":
        return _fold(E.Mul, a[0], k), [c * k for c in a[1]]
    if k <= 0 or known_multiple(a[0]) % k:
        return None
    if kind == "div":
        return _fold(E.FloorDiv, a[0], k), [c // k for c in a[1]]
    return E.make_const(a[0].dtype, 0), [c % k for c in a[1]]


def _by_constant(index):
    """("mul" | "div" | "mod", operand, k) of a vector product, floor quotient or remainder
    by the constant k (a quotient or remainder by a power of two also as lower_intrin's
    shift_right / bitwise_and), else (None, None, None)."""
    if isinstance(index, (E.Mul, E.FloorDiv, E.FloorMod)):
        k = index.b.value if isinstance(index.b, E.Broadcast) else None
        if isinstance(k, E.IntImm):
            kind = {E.Mul: "mul", E.FloorDiv: "div", E.FloorMod: "mod"}[type(index)]
            return kind, index.a, k.value
    if isinstance(index, E.Call) and index.op in ("tir.shift_right", "tir.bitwise_and"):
        a, b = index.args
        k = b.value if isinstance(b, E.Broadcast) else b
        if isinstance(k, E.IntImm) and k.value >= 0:
            if index.op == "tir.shift_right":
                return "div", a, 1 << k.value
            if k.value & (k.value + 1) == 0:
                return "mod", a, k.value + 1
    return None, None, None


def _sum(a, b, sign: int):
    """a + sign * b, without a zero term, a constant when both are."""
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.make_const(a.dtype, a.value + sign * b.value)
    if isinstance(a, E.IntImm) and a.value == 0 and sign == 1:
        return b
    return a + b if sign == 1 else a - b


def _fold(op, a, k: int):
    """op(a, k), a constant when `a` is."""
    if isinstance(a, E.IntImm):
        return E.make_const(a.dtype, a.value * k if op is E.Mul else a.value // k)
    return op(a, E.make_const(a.dtype, k))


def constant_term(e):
    """(rest, k): the integer expression `e` as rest + k, k the constant it adds."""
    if isinstance(e, E.IntImm):
        return E.make_const(e.dtype, 0), e.value
    if isinstance(e, (E.Add, E.Sub)) and isinstance(e.b, E.IntImm):
        rest, k = constant_term(e.a)
        return rest, k + (e.b.value if isinstance(e, E.Add) else -e.b.value)
    if isinstance(e, E.Add) and isinstance(e.a, E.IntImm):
        rest, k = constant_term(e.b)
        return rest, k + e.a.value
    return e, 0
