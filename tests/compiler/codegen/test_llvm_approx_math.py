"""float32 exp, sigmoid, erf and tanh on the llvm target are inline arithmetic (approx_math.py):
no libm call remains, vectorized loops stay vectorized, and results match float64 references
within the stated error (exp ≤ 2 ulp relative over the whole float32 range including
subnormals; erf ≤ 5e-7 absolute; tanh ≤ 5 ulp), with libm's answers at ±inf, NaN, overflow
and underflow."""
import math

import numpy as np
import pytest

import compiler
import microruntime
from compiler import te
from compiler.target.isa import vector_isa

N = 4096


def _build(fn, vectorize, dtype="float32"):
    A = te.placeholder((N,), name="A", dtype=dtype)
    B = te.compute((N,), lambda i: fn(A[i]), name="B")
    s = te.create_schedule(B.op)
    if vectorize:
        _, inner = s[B].split(B.op.axis[0], factor=8 if vectorize is True else vectorize)
        s[B].vectorize(inner)
    return compiler.build(s, [A, B], target="llvm", name="f")


def _run(mod, x):
    a, b = microruntime.nd.array(x), microruntime.nd.array(np.zeros_like(x))
    mod["f"](a, b)
    return b.numpy()


def _grid(lo, hi, specials=()):
    x = np.linspace(lo, hi, N - len(specials)).astype("float32")
    return np.concatenate([x, np.array(specials, "float32")])


# 16 lanes: one zmm register where the host has AVX-512 (2^n by vscalefps)
@pytest.mark.parametrize("vectorize", [False, True, 16])
def test_exp_matches_float64_within_two_ulp(vectorize):
    mod = _build(te.exp, vectorize)
    assert "expf" not in mod.get_source("ll")
    x = _grid(-110.0, 95.0, [0.0, -0.0, 1.0, 88.7, -87.4, -103.0, np.inf, -np.inf, np.nan])
    got = _run(mod, x)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype("float64"))
    normal = (want >= np.finfo("float32").tiny) & (want <= np.finfo("float32").max)
    rel = np.abs(got[normal] - want[normal]) / want[normal]
    assert rel.max() <= 2 * 2.0 ** -24, rel.max()
    sub = want < np.finfo("float32").tiny      # subnormal results: within one subnormal step
    assert np.abs(got[sub] - want[sub]).max() <= 2.0 ** -149
    assert got[-3] == np.inf and got[-2] == 0.0 and np.isnan(got[-1])
    assert got[x > 89.0].min() == np.inf and got[x < -104.0].max() == 0.0


@pytest.mark.parametrize("vectorize", [False, True])
def test_erf_matches_float64(vectorize):
    mod = _build(te.erf, vectorize)
    assert "erff" not in mod.get_source("ll")
    x = _grid(-6.0, 6.0, [0.0, 1e-30, -1e-6, np.inf, -np.inf, np.nan])
    got = _run(mod, x)
    want = np.array([math.erf(float(v)) for v in x])
    finite = ~np.isnan(x)
    assert np.abs(got[finite] - want[finite]).max() <= 5e-7
    small = np.abs(x) < 1e-3                   # erf(x) ~ 2x/sqrt(pi): relative accuracy kept
    assert np.allclose(got[small], want[small], rtol=1e-6, atol=1e-37)
    assert got[-3] == 1.0 and got[-2] == -1.0 and np.isnan(got[-1])


@pytest.mark.parametrize("vectorize", [True, 16])
def test_sigmoid_uses_inline_exp(vectorize):
    mod = _build(te.sigmoid, vectorize=vectorize)
    assert "expf" not in mod.get_source("ll")
    x = _grid(-100.0, 100.0)
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x.astype("float64")))
    np.testing.assert_allclose(_run(mod, x), want, rtol=1e-6, atol=1e-38)


def test_vectorized_exp_has_no_scalar_calls():
    asm = _build(te.exp, vectorize=True).get_source("asm")
    assert "expf" not in asm
    assert "vfmadd" in asm or "vmulps" in asm or "mulps" in asm   # packed float arithmetic


def test_avx512_exp_scales_by_vscalefps():
    if vector_isa().name != "avx512":
        pytest.skip("this host has no AVX-512")
    assert "vscalefps" in _build(te.exp, vectorize=16).get_source("asm")
    assert "vscalefps" not in _build(te.exp, vectorize=8).get_source("asm")


def test_float64_exp_still_uses_libm():
    mod = _build(te.exp, vectorize=False, dtype="float64")
    x = np.linspace(-700, 700, N)
    np.testing.assert_allclose(_run(mod, x), np.exp(x), rtol=1e-15)


@pytest.mark.parametrize("vectorize", [False, True])
def test_tanh_matches_float64_within_five_ulp(vectorize):
    mod = _build(te.tanh, vectorize)
    assert "tanhf" not in mod.get_source("ll")
    x = _grid(-12.0, 12.0, [0.0, -0.0, 1e-30, -3e-4, 4e-4, 7.9, np.inf, -np.inf, np.nan])
    got = _run(mod, x)
    want = np.tanh(x.astype("float64"))
    finite = np.isfinite(x)
    ulp = np.spacing(np.abs(want[finite]).astype("float32")).astype("float64")
    assert (np.abs(got[finite] - want[finite]) / ulp).max() <= 5
    assert got[-3] == 1.0 and got[-2] == -1.0 and np.isnan(got[-1])
    assert got[x.size - 9] == 0.0 and np.signbit(got[x.size - 8]) and got[x.size - 7] == 1e-30
    assert got[np.abs(x) > 7.91].tolist() == np.sign(x[np.abs(x) > 7.91]).tolist()
