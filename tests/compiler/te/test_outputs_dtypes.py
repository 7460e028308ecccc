"""Multi-output compute, int8/float16 tensors, intrinsics, and lower()'s argument kinds."""
import numpy as np
import pytest

from compiler import lower, te
from compiler.ir import IRModule
from compiler.tir import decl_buffer, interpreter


def test_multi_output(run, rng):
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    P, Q = te.compute((n,), lambda i: (A[i] + 1.0, A[i] * 3.0), name="PQ")
    s = te.create_schedule(P.op)
    assert P.op is Q.op and (P.value_index, Q.value_index) == (0, 1)
    a = rng.random(5, dtype="float32")
    p, q = np.zeros(5, "float32"), np.zeros(5, "float32")
    text = run(s, [A, P, Q], [a, p, q])
    assert text.count("for i in range(n):") == 1
    np.testing.assert_allclose(p, a + 1, rtol=1e-6)
    np.testing.assert_allclose(q, a * 3, rtol=1e-6)


def test_int8_wraps_like_c(run):
    A = te.placeholder((8,), "int8", "A")
    B = te.compute((8,), lambda i: A[i] + A[i], name="B")
    s = te.create_schedule(B.op)
    a, b = np.arange(120, 128, dtype="int8"), np.zeros(8, "int8")
    run(s, [A, B], [a, b])
    np.testing.assert_array_equal(b, a + a)


def test_int8_accumulate_in_int32(run, rng):
    A = te.placeholder((4, 16), "int8", "A")
    k = te.reduce_axis((0, 16), "k")
    R = te.compute((4,), lambda i: te.sum(A[i, k].astype("int32"), axis=k), name="R")
    s = te.create_schedule(R.op)
    a = rng.integers(-128, 127, (4, 16), dtype="int8")
    r = np.zeros(4, "int32")
    run(s, [A, R], [a, r])
    np.testing.assert_array_equal(r, a.astype("int32").sum(axis=1))


def test_float16_math(run, rng):
    H = te.placeholder((8,), "float16", "H")
    O = te.compute((8,), lambda i: te.exp(H[i]) * te.sqrt(H[i]), name="O")
    s = te.create_schedule(O.op)
    h, o = rng.random(8).astype("float16"), np.zeros(8, "float16")
    run(s, [H, O], [h, o])
    np.testing.assert_allclose(o, np.exp(h) * np.sqrt(h), rtol=2e-3)


@pytest.mark.parametrize("name, ref", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("floor", np.floor), ("ceil", np.ceil),
    ("abs", np.abs), ("rsqrt", lambda x: 1 / np.sqrt(x)), ("log2", np.log2)])
def test_intrinsics(run, rng, name, ref):
    A = te.placeholder((6,), name="A")
    B = te.compute((6,), lambda i: getattr(te, name)(A[i]), name="B")
    s = te.create_schedule(B.op)
    a, b = rng.random(6, dtype="float32") + 0.5, np.zeros(6, "float32")
    text = run(s, [A, B], [a, b])
    assert (f"tir.{name}(" in text) or name == "abs"
    np.testing.assert_allclose(b, ref(a), rtol=1e-5)


def test_if_then_else_and_all(run, rng):
    A = te.placeholder((6,), name="A")
    B = te.compute((6,), lambda i: te.if_then_else(te.all(i > 0, i < 5), A[i - 1], 0.0),
                   name="B")
    s = te.create_schedule(B.op)
    a, b = rng.random(6, dtype="float32"), np.ones(6, "float32")
    run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, [0.0, *a[0:4], 0.0])


def test_scalar_var_param_and_symbolic_strides(run, rng):
    m, st = te.var("m"), te.var("st")
    alpha = te.var("alpha", "float32")
    A = te.placeholder((m, m), name="A")
    B = te.compute((m, m), lambda i, j: A[i, j] * alpha, name="B")
    Ab = decl_buffer((m, m), "float32", "Ab", strides=[st, 1])
    s = te.create_schedule(B.op)
    mod = lower(s, [A, B, alpha], name="f", binds={A: Ab})
    assert "Ab[j + i * st]" in str(mod) or "Ab[i * st + j]" in str(mod)
    big = rng.random((5, 9), dtype="float32")
    a, b = big[:, 2:7], np.zeros((5, 5), "float32")
    interpreter.run(mod["f"], a, b, 2.5)
    np.testing.assert_allclose(b, a * 2.5, rtol=1e-6)


def test_lower_accepts_primfunc_and_module():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    mod = lower(s, [A, B], name="g")
    again = lower(mod["g"])
    assert "g" in again
    assert lower(IRModule({"g": mod["g"]}))["g"] is not None


def test_dump_ir_env(capsys, monkeypatch):
    monkeypatch.setenv("COMPILER_DUMP_IR", "1")
    monkeypatch.setenv("COMPILER_TIME_PASSES", "1")
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    lower(te.create_schedule(B.op), [A, B])
    err = capsys.readouterr().err
    assert "after storage_flatten" in err or "unchanged storage_flatten" in err
    assert "[pass] vectorize:" in err
