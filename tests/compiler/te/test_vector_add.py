"""Seed 003: vector add with a symbolic length, lowered to readable loop IR and run."""
import numpy as np

from compiler import lower, te


def _add():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    return n, A, B, C


def test_default_schedule_text_and_values(run, rng):
    _, A, B, C = _add()
    s = te.create_schedule(C.op)
    mod = lower(s, [A, B, C], name="test_add", simple_mode=True)
    text = str(mod)
    assert "def test_add(A: Buffer(float32, [n]), B: Buffer(float32, [n]), C: " in text
    assert "for i in range(n):" in text
    f = mod["test_add"]
    assert f.attrs["global_symbol"] == "test_add" and f.attrs["tir.noalias"] is True
    for size in (1, 7, 16):
        a, b = rng.random(size, dtype="float32"), rng.random(size, dtype="float32")
        c = np.zeros(size, "float32")
        run(s, [A, B, C], [a, b, c], name="test_add")
        np.testing.assert_allclose(c, a + b)


def test_split_non_divisible_adds_guard(run, rng):
    _, A, B, C = _add()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    a, b = rng.random(10, dtype="float32"), rng.random(10, dtype="float32")
    c = np.zeros(10, "float32")
    text = run(s, [A, B, C], [a, b, c])
    assert "for i.outer in range((n + 3) // 4):" in text
    assert "for i.inner in range(4):" in text
    assert "if i.outer * 4 + i.inner < n:" in text
    np.testing.assert_allclose(c, a + b)


def test_constant_shape_split_vectorizes(run, rng):
    A = te.placeholder((16,), name="A")
    B = te.placeholder((16,), name="B")
    C = te.compute((16,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[C].vectorize(xi)
    s[C].parallel(xo)
    a, b = rng.random(16, dtype="float32"), rng.random(16, dtype="float32")
    c = np.zeros(16, "float32")
    text = run(s, [A, B, C], [a, b, c])
    assert "for i.outer in range(4):  # parallel" in text
    assert "ramp(i.outer * 4, 1, 4)" in text and "if " not in text
    np.testing.assert_allclose(c, a + b)
