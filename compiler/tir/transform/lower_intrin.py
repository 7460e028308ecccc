"""lower_intrin: rewrite intrinsics and operators that have a cheaper or more portable form into
simpler IR, the same for every host target.

Before: any IR (packed form or not).
After:
- no `tir.sigmoid` (1 / (1 + exp(-x))), `tir.rsqrt` (1 / sqrt(x)), `tir.exp10` (pow(10, x)),
  no float `tir.pow` by a constant whole exponent 1 to 4 (multiplications of the base),
  `tir.popcount` (bit counting on the unsigned value: masks, shifts and one multiply) or
  `tir.likely` (its argument); no `tir.assume` (a fact for the optimizer, evaluated for no
  effect: the statement becomes a no-op);
- integer FloorDiv / FloorMod by a positive power-of-two constant are `tir.shift_right` /
  `tir.bitwise_and` (exact floor semantics in two's complement);
- float FloorDiv is `floor(a / b)` and float FloorMod is `a - floor(a / b) * b`;
- what remains for codegens: the math intrinsics of `compiler.ir.op` (exp, log, sqrt, ...), and
  integer FloorDiv / FloorMod by other divisors (C prints helper calls, LLVM expands them).
Vector operands (Broadcast divisors) are handled lane-wise like scalars.
"""
from __future__ import annotations

from ...ir import IRModule
from ...ir.dtype import DType
from .. import (
    Broadcast,
    Call,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IRMutator,
    Let,
    PrimExpr,
    Stmt,
    Var,
    cast,
    make_const,
    no_op,
)
from .common import map_funcs


def lower_intrin(mod: IRModule) -> IRModule:
    mutator = _LowerIntrin()
    return map_funcs(mod, mutator.visit_func)


def _const_value(e: PrimExpr):
    if isinstance(e, Broadcast):
        e = e.value
    return e.value if isinstance(e, IntImm) else None


def _pow2_shift(e: PrimExpr):
    v = _const_value(e)
    if v is not None and v > 0 and v & (v - 1) == 0:
        return v.bit_length() - 1
    return None


def _like(e: PrimExpr, value) -> PrimExpr:
    return make_const(e.dtype, value)


# pow(x, n) with a constant whole exponent up to this is written as multiplications.
MAX_MULTIPLIED_POWER = 4


def _small_power(e: Call):
    """pow(x, n) for a constant n in 1..MAX_MULTIPLIED_POWER (a scalar or a Broadcast of one)
    as n - 1 multiplications of x (GPT-2's GELU has x ** 3: a libm call per element stops
    the loop from being vectorized); None otherwise."""
    x, n = e.args
    if isinstance(n, Broadcast):
        n = n.value
    value = getattr(n, "value", None)
    if not isinstance(value, (int, float)) or value != int(value) or \
            not 1 <= value <= MAX_MULTIPLIED_POWER or not e.dtype.is_float:
        return None
    v = x if isinstance(x, (Var, IntImm, FloatImm)) else Var("pow_base", x.dtype)
    out = v
    for _ in range(int(value) - 1):
        out = out * v
    return out if v is x else Let(v, x, out)


def _popcount(x: PrimExpr, dtype) -> PrimExpr:
    """The bits set in integer `x`, counted in parallel within the word (pairs, nibbles, bytes,
    then one multiply sums the bytes into the top byte)."""
    bits = x.dtype.bits
    if bits == 1:
        return cast(dtype, x)
    word = x.dtype if x.dtype.is_uint else DType.parse(f"uint{bits}")
    u = cast(word, x)

    def mask(pattern: int) -> PrimExpr:
        return make_const(word, int(f"{pattern:02x}" * (bits // 8), 16))

    def shr(a, k):
        return Call(word, "tir.shift_right", (a, make_const(word, k)))

    def band(a, b):
        return Call(word, "tir.bitwise_and", (a, b))

    u = u - band(shr(u, 1), mask(0x55))
    u = band(u, mask(0x33)) + band(shr(u, 2), mask(0x33))
    u = band(u + shr(u, 4), mask(0x0F))
    if bits > 8:
        u = shr(u * mask(0x01), bits - 8)
    return cast(dtype, u)


class _LowerIntrin(IRMutator):
    def visit_Evaluate(self, s: Evaluate) -> Stmt:
        if isinstance(s.value, Call) and s.value.op == "tir.assume":
            return no_op()
        return self.generic_visit(s)

    def visit_Call(self, e: Call) -> PrimExpr:
        e = self.generic_visit(e)
        if e.op == "tir.likely":
            return e.args[0]
        if e.op == "tir.sigmoid":
            x = e.args[0]
            return _like(x, 1) / (_like(x, 1) + Call(e.dtype, "tir.exp", (-x,)))
        if e.op == "tir.rsqrt":
            x = e.args[0]
            return _like(x, 1) / Call(e.dtype, "tir.sqrt", (x,))
        if e.op == "tir.exp10":
            x = e.args[0]
            return Call(e.dtype, "tir.pow", (_like(x, 10), x))
        if e.op == "tir.popcount":
            return _popcount(e.args[0], e.dtype)
        if e.op == "tir.pow":
            power = _small_power(e)
            return e if power is None else power
        return e

    def visit_FloorDiv(self, e: FloorDiv) -> PrimExpr:
        e = self.generic_visit(e)
        if e.dtype.is_float:
            return Call(e.dtype, "tir.floor", (e.a / e.b,))
        shift = _pow2_shift(e.b)
        if shift is not None and e.dtype.is_integer:
            if shift == 0:
                return e.a
            return Call(e.dtype, "tir.shift_right", (e.a, _like(e.b, shift)))
        return e

    def visit_FloorMod(self, e: FloorMod) -> PrimExpr:
        e = self.generic_visit(e)
        if e.dtype.is_float:
            return e.a - Call(e.dtype, "tir.floor", (e.a / e.b,)) * e.b
        shift = _pow2_shift(e.b)
        if shift is not None and e.dtype.is_integer:
            return Call(e.dtype, "tir.bitwise_and", (e.a, _like(e.b, (1 << shift) - 1)))
        return e
