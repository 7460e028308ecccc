"""float32 exp and erf as straight-line LLVM arithmetic, for scalars and vectors alike.

LLVM has no vector libm here: `llvm.exp.v8f32` becomes eight calls to expf, and a call in a loop
stops the loop vectorizer. These emitters use only multiplies, adds, compares and selects and
integer bit operations (no calls on any target), so a vectorized kernel stays vectorized and a
scalar loop can be vectorized by LLVM.

- `exp_f32`: Cody–Waite range reduction x = n·ln2 + r (ln2 split in a high part exact in a few
  bits and a low part), a degree-7 polynomial for e^r on |r| ≤ ln2/2 (Cephes' coefficients), and
  2^n built in the exponent bits as two factors, so that results down to the smallest subnormal
  and up to overflow come out right (on AVX-512, 2^n is applied by vscalefps). Error ≤ 1.5 ulp;
  ±inf, NaN, overflow and underflow as libm.
- `erf_f32`: the rational approximation x·P(x²)/Q(x²) on [-4, 4] (Eigen's coefficients; outside,
  erf is ±1 in float32). Error ≤ 5e-7 absolute; NaN propagates.
- `tanh_f32`: the rational approximation x·P(x²)/Q(x²) on |x| ≤ 7.905 (Eigen's coefficients;
  beyond, ±1, which tanh rounds to in float32), x itself for |x| < 4e-4 (where tanh(x) rounds
  to x). Error ≤ 5 ulp; NaN propagates.
"""
from __future__ import annotations

from llvmlite import ir

from .expr import splat, with_element
from .types import I32

_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
             1.6666665459e-1, 5.0000001201e-1)
_LOG2E = 1.44269504088896341
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4
_ROUND_MAGIC = 12582912.0            # 1.5 * 2**23: adding it rounds |v| < 2**22 to an integer
_EXP_RANGE = (-104.0, 89.0)          # beyond: 0 and +inf in float32
_CURRENT_ROUNDING = 4                # an AVX-512 instruction's rounding operand: MXCSR's mode

_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)

_TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
           5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
           4.89352455891786e-03)
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
           4.89352518554385e-03)
_TANH_CLAMP = 7.90531110763549805
_TANH_TINY = 0.0004


class ApproxMath:
    """Mixin of the function emitter (needs `self.b`, `self.unary_intrinsic`, `self.ctx`)."""

    def _poly(self, x: ir.Value, coeffs) -> ir.Value:
        """Horner's rule: coeffs[0]·x^(n-1) + ... + coeffs[-1]."""
        fm, ty = self.ctx.fast_math, x.type
        p = splat(ty, coeffs[0])
        for c in coeffs[1:]:
            p = self.b.fadd(self.b.fmul(p, x, flags=fm), splat(ty, c), flags=fm)
        return p

    def _clamp(self, x: ir.Value, lo: float, hi: float) -> ir.Value:
        """x limited to [lo, hi] by compare and select (vmaxps/vminps on x86; llvm.maxnum
        would be a libm call fmaxf on a core without such an instruction, as Cortex-M4)."""
        lo_v, hi_v = splat(x.type, lo), splat(x.type, hi)
        x = self.b.select(self.b.fcmp_ordered("<", x, lo_v), lo_v, x)
        return self.b.select(self.b.fcmp_ordered(">", x, hi_v), hi_v, x)

    def _keep_nan(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """y, or x where x is NaN."""
        return self.b.select(self.b.fcmp_unordered("uno", x, x), x, y)

    def _pow2(self, n: ir.Value) -> ir.Value:
        """2**n as a float, for integers -126 <= n <= 127 (scalar or vector)."""
        biased = self.b.add(n, splat(n.type, 127))
        bits = self.b.shl(biased, splat(n.type, 23))
        return self.b.bitcast(bits, with_element(n.type, ir.FloatType()))

    def _zmm_f32(self, ty: ir.Type) -> bool:
        """Whether `ty` is a <16 x float> of a target with AVX-512F (one zmm register)."""
        return self.ctx.avx512 and isinstance(ty, ir.VectorType) and ty.count == 16 and \
            isinstance(ty.element, ir.FloatType)

    def _x86(self, name: str, ty: ir.Type, *args: ir.Value) -> ir.Value:
        """A call of the x86 intrinsic `name` returning `ty`."""
        fn = self.ctx.declare(name, ty, [a.type for a in args])
        return self.b.call(fn, list(args))

    def exp_f32(self, x: ir.Value) -> ir.Value:
        b, fm, ty = self.b, self.ctx.fast_math, x.type
        xc = self._clamp(x, *_EXP_RANGE)
        t = b.fadd(b.fmul(xc, splat(ty, _LOG2E), flags=fm), splat(ty, _ROUND_MAGIC), flags=fm)
        n = b.fsub(t, splat(ty, _ROUND_MAGIC))
        r = b.fsub(xc, b.fmul(n, splat(ty, _LN2_HI), flags=fm), flags=fm)
        r = b.fsub(r, b.fmul(n, splat(ty, _LN2_LO), flags=fm), flags=fm)
        p = self._poly(r, _EXP_POLY)
        y = b.fadd(b.fmul(b.fmul(p, r, flags=fm), r, flags=fm), r, flags=fm)
        y = b.fadd(y, splat(ty, 1.0), flags=fm)
        if self._zmm_f32(ty):
            # vscalefps: y * 2**n in one instruction, overflow to inf and underflow through
            # the subnormals to 0 as the hardware rounds them; a NaN x is NaN all the way
            return self._x86("llvm.x86.avx512.mask.scalef.ps.512", ty, y, n,
                             ir.Constant(ty, None), ir.Constant(ir.IntType(16), -1),
                             ir.Constant(I32, _CURRENT_ROUNDING))
        # n in [-150, 129]: 2**n as 2**(n>>1) * 2**(n - n>>1), both factors normal floats
        ni = b.fptosi(n, with_element(ty, I32))
        n1 = b.ashr(ni, splat(ni.type, 1))
        y = b.fmul(b.fmul(y, self._pow2(n1)), self._pow2(b.sub(ni, n1)))
        return self._keep_nan(x, y)

    def erf_f32(self, x: ir.Value) -> ir.Value:
        b, fm = self.b, self.ctx.fast_math
        xc = self._clamp(x, -4.0, 4.0)
        x2 = b.fmul(xc, xc, flags=fm)
        num = b.fmul(xc, self._poly(x2, _ERF_P), flags=fm)
        y = b.fdiv(num, self._poly(x2, _ERF_Q), flags=fm)
        return self._keep_nan(x, y)

    def tanh_f32(self, x: ir.Value) -> ir.Value:
        b, fm = self.b, self.ctx.fast_math
        xc = self._clamp(x, -_TANH_CLAMP, _TANH_CLAMP)
        x2 = b.fmul(xc, xc, flags=fm)
        y = b.fdiv(b.fmul(xc, self._poly(x2, _TANH_P), flags=fm), self._poly(x2, _TANH_Q),
                   flags=fm)
        ax = self.unary_intrinsic("llvm.fabs", x)
        one = self.unary_intrinsic("llvm.copysign", splat(x.type, 1.0), x)
        y = b.select(b.fcmp_ordered(">=", ax, splat(x.type, _TANH_CLAMP)), one, y)
        y = b.select(b.fcmp_ordered("<", ax, splat(x.type, _TANH_TINY)), x, y)
        return self._keep_nan(x, y)
