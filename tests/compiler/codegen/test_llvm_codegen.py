"""The LLVM host codegen on hand-built loop IR (made packed by make_packed_api), run through
ctypes against a stub runtime: arithmetic semantics, dtypes, vectors, memory, control flow."""
import math

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from llvm_host import Tensor, compile_host  # noqa: E402

from compiler.ir.dtype import handle  # noqa: E402
from compiler.tir import (
    Allocate,
    AttrStmt,
    Broadcast,
    BufferStore,
    Call,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    Let,
    LetStmt,
    Max,
    Min,
    Mod,
    Ramp,
    Select,
    Var,
    While,
    cast,
    const,
    decl_buffer,
    seq,
)


def _func(bufs, body, scalars=()):
    params, bmap = [], []
    for b in bufs:
        p = Var(b.name, handle)
        params.append(p)
        bmap.append((p, b))
    return list(scalars) + params, bmap, body


def _elementwise(dtype_in, dtype_out, fn, n=None):
    n = n if n is not None else Var("n", "int32")
    A = decl_buffer((n,), dtype_in, "A")
    B = decl_buffer((n,), dtype_in, "B")
    C = decl_buffer((n,), dtype_out, "C")
    i = Var("i", "int32")
    body = For(i, const(0), n, ForKind.SERIAL, BufferStore(C, fn(A[i], B[i]), (i,)))
    return _func([A, B, C], body)


def test_add_float32_and_symbols(tmp_path):
    lib, art = compile_host(tmp_path, {"add": _elementwise("float32", "float32",
                                                           lambda a, b: a + b)})
    a, b = np.random.rand(37).astype("float32"), np.random.rand(37).astype("float32")
    c = np.zeros(37, "float32")
    lib.run("add", a, b, c)
    np.testing.assert_allclose(c, a + b)
    c[:] = 0
    lib.run("main", a, b, c)  # the weak forwarder of a one-function module
    np.testing.assert_allclose(c, a + b)
    assert lib.has("__tvm_ffi__library_ctx")
    assert "define" in art.sources["ll"] and art.sources["asm"].strip()


def test_errors_match_packed_api_messages(tmp_path):
    lib, _ = compile_host(tmp_path, {"add": _elementwise("float32", "float32",
                                                         lambda a, b: a + b)})
    a = np.zeros(4, "float32")
    rc, err = lib.call("add", a, a.astype("int32"), a)
    assert rc == -1
    assert err == ("TypeError: Mismatched B.dtype on argument #1 when calling:\n"
                   "  `add(A, B, C)`,\n  expected float32, but got int32")
    rc, err = lib.call("add", a, np.zeros(5, "float32"), a)
    assert err.startswith("ValueError: Mismatched B.shape[0] on argument #1")
    assert err.endswith("expected n = 4, but got 5")
    rc, err = lib.call("add", a, a)
    assert err == ("TypeError: Expected 3 arguments when calling:\n  `add(A, B, C)`,\n"
                   "  but got 2")
    rc, err = lib.call("add", a, np.zeros((2, 2), "float32"), a)
    assert "B.ndim" in err and err.endswith("expected 1, but got 2")
    rc, err = lib.call("add", a, Tensor(np.zeros(4, "uint16"), (4, 16)), a)
    assert err.endswith("expected float32, but got bfloat16")
    rc, err = lib.call("add", a, Tensor(np.zeros(4, "int32"), (0, 8, 4)), a)
    assert err.endswith("expected float32, but got int8x4")
    rc, err = lib.call("add", a, Tensor(np.zeros(4, "uint8"), (6, 8)), a)
    assert err.endswith("expected float32, but got bool")
    rc, err = lib.call("add", a, Tensor(np.zeros(4, "uint8"), (99, 8)), a)
    assert err.endswith("expected float32, but got dtype8")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_division_semantics(tmp_path, dtype):
    ops = {"tdiv": Div, "tmod": Mod, "fdiv": FloorDiv, "fmod": FloorMod, "mn": Min, "mx": Max}
    funcs = {name: _elementwise(dtype, dtype, lambda a, b, op=op: op(a, b))
             for name, op in ops.items()}
    lib, _ = compile_host(tmp_path, funcs)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(max(info.min, -100), min(info.max, 100), 64).astype(dtype)
    b = rng.integers(max(info.min, -9), 10, 64).astype(dtype)
    b[b == 0] = 3
    expect = {"fdiv": a // b, "fmod": a % b, "mn": np.minimum(a, b), "mx": np.maximum(a, b),
              "tdiv": (np.trunc(a.astype("float64") / b)).astype(dtype),
              "tmod": np.fmod(a, b)}
    for name, want in expect.items():
        c = np.zeros(64, dtype)
        lib.run(name, a, b, c)
        np.testing.assert_array_equal(c, want, err_msg=name)


def test_casts_with_signedness(tmp_path):
    n = Var("n", "int32")
    funcs = {}
    cases = [("int8", "int32"), ("uint8", "int32"), ("int32", "int8"), ("float32", "int32"),
             ("float32", "uint8"), ("int32", "float64"), ("uint32", "float32"),
             ("float64", "float32"), ("int16", "uint64"), ("float32", "bool")]
    for k, (src, dst) in enumerate(cases):
        A = decl_buffer((n,), src, "A")
        C = decl_buffer((n,), dst, "C")
        i = Var("i", "int32")
        funcs[f"c{k}"] = _func([A, C], For(i, const(0), n, ForKind.SERIAL,
                                           BufferStore(C, Cast(C.dtype, A[i]), (i,))))
    lib, _ = compile_host(tmp_path, funcs)
    for k, (src, dst) in enumerate(cases):
        a = np.array([0, 1, 5, 100, 120, 3, 2, 7], dtype=src)
        if src.startswith("int"):
            a[1::3] *= -1
        c = np.zeros(8, dst)
        lib.run(f"c{k}", a, c)
        np.testing.assert_array_equal(c, a.astype(dst), err_msg=f"{src}->{dst}")


def test_float16_inputs(tmp_path):
    lib, _ = compile_host(tmp_path, {
        "h": _elementwise("float16", "float16", lambda a, b: a * b + a),
        "w": _elementwise("float16", "float32", lambda a, b: cast("float32", a) + b)})
    a = (np.random.rand(33) * 4).astype("float16")
    b = (np.random.rand(33) * 4).astype("float16")
    c = np.zeros(33, "float16")
    lib.run("h", a, b, c)
    np.testing.assert_array_equal(c, (a * b) + a)
    c32 = np.zeros(33, "float32")
    lib.run("w", a, b, c32)
    np.testing.assert_allclose(c32, a.astype("float32") + b.astype("float32"), rtol=1e-3)


def _to_bf16(x):
    bits = x.astype("float32").view("uint32")
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("uint16")


def test_bfloat16_via_integer_bits(tmp_path):
    n = Var("n", "int32")
    A = decl_buffer((n,), "bfloat16", "A")
    B = decl_buffer((n,), "bfloat16", "B")
    C = decl_buffer((n,), "bfloat16", "C")
    D = decl_buffer((n,), "float32", "D")
    i = Var("i", "int32")
    body = For(i, const(0), n, ForKind.SERIAL, seq(
        BufferStore(C, A[i] + B[i], (i,)), BufferStore(D, cast("float32", A[i]), (i,))))
    lib, _ = compile_host(tmp_path, {"bf": _func([A, B, C, D], body)})
    x, y = np.random.rand(16).astype("float32"), np.random.rand(16).astype("float32")
    a, b = _to_bf16(x), _to_bf16(y)
    fa = (a.astype("uint32") << 16).view("float32")
    fb = (b.astype("uint32") << 16).view("float32")
    c, d = np.zeros(16, "uint16"), np.zeros(16, "float32")
    bf = (4, 16)
    lib.run("bf", Tensor(a, bf), Tensor(b, bf), Tensor(c, bf), d)
    np.testing.assert_array_equal(c, _to_bf16(fa + fb))
    np.testing.assert_array_equal(d, fa)


def test_vectorized_loads_and_gather(tmp_path):
    n = 64
    A = decl_buffer((n,), "float32", "A")
    B = decl_buffer((n,), "float32", "B")
    C = decl_buffer((n,), "float32", "C")
    D = decl_buffer((n // 2,), "float32", "D")
    i = Var("i", "int32")
    contiguous = Ramp(i * 8, const(1), 8)
    strided = Ramp(i * 8, const(2), 4)
    body = seq(
        For(i, const(0), const(n // 8), ForKind.SERIAL,
            BufferStore(C, A[contiguous] * B[contiguous] + Broadcast(const(1.0), 8),
                        (contiguous,))),
        For(i, const(0), const(n // 8), ForKind.SERIAL,
            BufferStore(D, A[strided], (Ramp(i * 4, const(1), 4),))))
    lib, art = compile_host(tmp_path, {"vec": _func([A, B, C, D], body)},
                            target="llvm -opt-level=1")
    assert "<8 x float>" in art.sources["ll"]
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c, d = np.zeros(n, "float32"), np.zeros(n // 2, "float32")
    lib.run("vec", a, b, c, d)
    np.testing.assert_allclose(c, a * b + 1, rtol=1e-6)
    np.testing.assert_array_equal(d, a[::2])


def test_math_intrinsics(tmp_path):
    cases = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
             "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "rsqrt": lambda x: 1 / np.sqrt(x),
             "erf": np.vectorize(math.erf), "floor": np.floor, "fabs": np.abs,
             "log1p": np.log1p, "cos": np.cos, "atan": np.arctan}
    funcs = {}
    for name in cases:
        funcs[name] = _elementwise("float32", "float32",
                                   lambda a, b, name=name: Call(a.dtype, f"tir.{name}", (a,)))
    funcs["pow"] = _elementwise("float32", "float32",
                                lambda a, b: Call(a.dtype, "tir.pow", (a, b)))
    lib, _ = compile_host(tmp_path, funcs)
    x = (np.random.rand(16) * 2 + 0.1).astype("float32")
    y = (np.random.rand(16) * 2).astype("float32")
    for name, ref in list(cases.items()) + [("pow", None)]:
        c = np.zeros(16, "float32")
        lib.run(name, x, y, c)
        want = np.power(x, y) if ref is None else ref(x.astype("float64"))
        np.testing.assert_allclose(c, want, rtol=2e-6, atol=1e-7, err_msg=name)


def test_control_flow_let_select_while_and_allocate(tmp_path):
    n = Var("n", "int32")
    A = decl_buffer((n,), "int32", "A")
    C = decl_buffer((n,), "int32", "C")
    small = decl_buffer((16,), "int32", "small", scope="local")
    big = decl_buffer((n,), "int32", "big")
    i, j, x = Var("i", "int32"), Var("j", "int32"), Var("x", "int32")
    k = decl_buffer((1,), "int32", "k", scope="local")
    # C[i] = (sum_{j < A[i]} j) via a While loop on a stack counter, doubled via the workspace.
    count = seq(
        BufferStore(k, const(0), (const(0),)),
        BufferStore(small, const(0), (const(0),)),
        While(k[0] < A[i], seq(
            BufferStore(small, small[0] + k[0], (const(0),)),
            BufferStore(k, k[0] + 1, (const(0),)))))
    body = seq(
        For(i, const(0), n, ForKind.SERIAL, Allocate(k, Allocate(small, seq(
            count,
            LetStmt(x, small[0], IfThenElse(
                x > 10, BufferStore(big, Select(x > 20, x, -x), (i,)),
                BufferStore(big, Let(j, x * 2, j + 1), (i,)))))))),
        For(i, const(0), n, ForKind.SERIAL, BufferStore(C, big[i], (i,))))
    lib, _ = compile_host(tmp_path, {"cf": _func([A, C], Allocate(big, body))})
    a = np.arange(12, dtype="int32")
    c = np.zeros(12, "int32")
    lib.run("cf", a, c)
    s = a * (a - 1) // 2
    want = np.where(s > 10, np.where(s > 20, s, -s), s * 2 + 1)
    np.testing.assert_array_equal(c, want)
    assert lib.counter("stub_workspace_allocs") == 1 == lib.counter("stub_workspace_frees")


def test_fast_math_and_opt_levels(tmp_path):
    func = {"f": _elementwise("float32", "float32", lambda a, b: a * b + a)}
    _, art = compile_host(tmp_path / "fast", func, target="llvm -fast-math")
    assert "fmul fast" in art.sources["ll"] or "fadd fast" in art.sources["ll"]
    _, art = compile_host(tmp_path / "nnan", func, target="llvm -fast-math-nnan")
    assert "nnan" in art.sources["ll"] and " fast " not in art.sources["ll"]
    for level in (0, 1, 2, 3):
        lib, _ = compile_host(tmp_path / f"o{level}", func, target=f"llvm -opt-level={level}")
        a = np.ones(8, "float32")
        c = np.zeros(8, "float32")
        lib.run("f", a, a, c)
        assert (c == 2).all()


def test_unroll_disable_keeps_the_loop_rolled(tmp_path):
    """A loop under the `pragma_unroll_disable` attribute carries llvm.loop.unroll.disable
    through LLVM's passes (a loop ID on its back edge); the result is the same."""
    def dot(pragma):
        A = decl_buffer((8,), "float32", "A")
        C = decl_buffer((1,), "float32", "C")
        k = Var("k", "int32")
        loop = For(k, const(0), const(8), ForKind.SERIAL,
                   BufferStore(C, C[0] + A[k] * A[k], (const(0),)))
        if pragma:
            loop = AttrStmt(k, "pragma_unroll_disable", const(1), loop)
        return _func([A, C], loop)

    a = np.arange(8, dtype="float32")
    for pragma in (True, False):
        lib, art = compile_host(tmp_path / str(pragma), {"dot": dot(pragma)})
        c = np.zeros(1, "float32")
        lib.run("dot", a, c)
        assert c[0] == float((a * a).sum())
        assert ("llvm.loop.unroll.disable" in art.sources["ll"]) == pragma


def test_no_strength_reduce_turns_lsr_off_for_the_module(tmp_path, monkeypatch):
    """A loop under `pragma_no_strength_reduce` makes its function's module skip LLVM's loop
    strength reduction (when every function of the module asks); the result is the same."""
    from compiler.codegen.llvm import codegen

    def gather(pragma):
        A = decl_buffer((32,), "float32", "A")
        C = decl_buffer((8,), "float32", "C")
        i = Var("i", "int32")
        loop = For(i, const(0), const(8), ForKind.SERIAL,
                   BufferStore(C, A[i * 4 + 1], (i,)))
        if pragma:
            loop = AttrStmt(i, "pragma_no_strength_reduce", const(1), loop)
        return _func([A, C], loop)

    asked = []
    emit = codegen.emit
    monkeypatch.setattr(codegen, "emit", lambda tm, m, strength_reduce=True, assembly=False:
                        asked.append(strength_reduce) or emit(tm, m, strength_reduce, assembly))
    a = np.arange(32, dtype="float32")
    for funcs, want in (({"g": gather(True)}, False), ({"g": gather(False)}, True),
                        ({"g": gather(True), "h": gather(False)}, True)):
        asked.clear()
        lib, _ = compile_host(tmp_path / str(len(funcs)) / str(want), funcs)
        for name in funcs:
            c = np.zeros(8, "float32")
            lib.run(name, a, c)
            np.testing.assert_array_equal(c, a[1::4])
        assert asked == [want]


def test_scalar_arguments(tmp_path):
    n = Var("n", "int32")
    A = decl_buffer((n,), "float32", "A")
    s, t = Var("s", "float32"), Var("t", "int64")
    i = Var("i", "int32")
    body = For(i, const(0), n, ForKind.SERIAL,
               BufferStore(A, A[i] * s + cast("float32", t), (i,)))
    lib, _ = compile_host(tmp_path, {"axpb": _func([A], body, scalars=[s, t])})
    a = np.arange(5, dtype="float32")
    lib.run("axpb", 2.5, 3, a)
    np.testing.assert_allclose(a, np.arange(5) * 2.5 + 3)
