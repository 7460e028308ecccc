"""TVMScript without blocks (`from tvm.script import tir as T`, `@T.prim_func`), as classic
TVM reads it: parameters annotated `T.Buffer(shape, dtype)` are tensor arguments, `T.handle`
ones are bound by `T.match_buffer`, scalar ones (`T.int32`) are scalar arguments; loops,
stores, lets, allocations, ifs and asserts become the matching loop-IR statements. Each parsed
function is built and run against numpy, or compared structurally with the IR built by hand;
`func.script()` prints a function back as TVMScript that `from_source` reads into a
structurally equal one."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, tir
from compiler.ir import IRModule, assert_structural_equal, structural_equal
from compiler.script import from_source
from compiler.script import tir as T
from compiler.script.frames import ScriptError


def _run(func, target, *arrays):
    mod = compiler.build(IRModule.from_expr(func), target=target)
    nds = [runtime.nd.array(a) if isinstance(a, np.ndarray) else a for a in arrays]
    mod[func.attrs["global_symbol"]](*nds)
    return [n.numpy() if hasattr(n, "numpy") else n for n in nds]


def test_elementwise_parses_to_the_ir_built_by_hand():
    @T.prim_func
    def scale(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "scale", "tir.noalias": True})
        for i, j in T.grid(4, 8):
            B[i, j] = A[i, j] * T.float32(2)

    assert isinstance(scale, tir.PrimFunc)
    assert scale.attrs["global_symbol"] == "scale" and scale.attrs["tir.noalias"]
    a = tir.decl_buffer((4, 8), "float32", "A")
    b = tir.decl_buffer((4, 8), "float32", "B")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.For(
        j, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(b, a[i, j] * tir.const(2.0), (i, j))))
    expected = tir.PrimFunc((a, b), body, attrs={"global_symbol": "scale", "tir.noalias": True})
    assert structural_equal(scale, expected)
    other = tir.PrimFunc((a, b), body.__class__(i, 0, 4, tir.ForKind.PARALLEL, body.body),
                         attrs=expected.attrs)
    assert not structural_equal(scale, other)


def test_loop_kinds_and_ranges(target):
    @T.prim_func
    def kinds(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.parallel(4):
            for j in T.vectorized(4):
                B[i * 4 + j] = A[i * 4 + j] + T.float32(1)
        for k in range(2, 5):
            B[k] = B[k] * T.float32(10)

    loops = []
    tir.post_order_visit(kinds.body, lambda n: loops.append(n)
                         if isinstance(n, tir.For) else None)
    assert sorted(lp.kind for lp in loops) == sorted(["parallel", "vectorized", "serial"])
    ranged = next(lp for lp in loops if lp.loop_var.name == "k")
    assert ranged.min.value == 2 and ranged.extent.value == 3
    a = np.random.rand(16).astype("float32")
    _, b = _run(kinds, target, a, np.zeros(16, "float32"))
    want = a + 1
    want[2:5] *= 10
    np.testing.assert_allclose(b, want, rtol=1e-6)


def test_match_buffer_and_scalar_parameters(target):
    @T.prim_func
    def add_n(a: T.handle, b: T.handle, n: T.int32, c: T.float32):
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.serial(n):
            B[i] = A[i] + c

    assert [p.dtype for p in add_n.params] == ["handle", "handle", "int32", "float32"]
    assert len(add_n.buffer_map) == 2
    a = np.random.rand(13).astype("float32")
    _, b, _, _ = _run(add_n, target, a, np.zeros(13, "float32"), 13, 0.5)
    np.testing.assert_allclose(b, a + 0.5, rtol=1e-6)


def test_allocate_let_if_and_aliasing_buffer(target):
    @T.prim_func
    def staged(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        tmp = T.allocate([8], "int32", "global")
        Tmp = T.Buffer((8,), "int32", data=tmp)
        for i in range(8):
            x = A[i] * 3
            if x % 2 == 0:
                Tmp[i] = x
            else:
                Tmp[i] = T.if_then_else(x > 10, x - 10, 0)
        B_flat = T.Buffer((2, 4), "int32", data=B.data)
        for i, j in T.grid(2, 4):
            B_flat[i, j] = Tmp[i * 4 + j] + 1

    kinds = set()
    tir.post_order_visit(staged.body, lambda n: kinds.add(type(n).__name__))
    assert {"Allocate", "LetStmt", "IfThenElse"} <= kinds
    a = np.arange(-3, 5, dtype="int32") * 5
    _, b = _run(staged, target, a, np.zeros(8, "int32"))
    x = a * 3
    want = np.where(x % 2 == 0, x, np.where(x > 10, x - 10, 0)) + 1
    np.testing.assert_array_equal(b, want)


def test_while_augassign_and_assume(target):
    @T.prim_func
    def prefix(A: T.Buffer((6,), "int64"), B: T.Buffer((6,), "int64")):
        T.func_attr({"global_symbol": "prefix"})
        for i in range(6):
            T.assume(A[i] >= T.int64(0))
            B[i] = T.int64(0)
            for j in range(i + 1):
                B[i] += A[j]

    a = np.array([3, 1, 4, 1, 5, 9], dtype="int64")
    _, b = _run(prefix, target, a, np.zeros(6, "int64"))
    np.testing.assert_array_equal(b, np.cumsum(a))


def test_python_values_are_evaluated_while_parsing(target):
    n, factor = 12, 3.0

    @T.prim_func
    def closure(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        half = n // 2
        for i in range(n):
            if half > 100:  # decided while parsing: only the else branch is kept
                B[i] = T.float32(0)
            else:
                B[i] = T.Select(i < half, A[i] * factor, A[i])

    assert not any(isinstance(s, tir.IfThenElse) for s in [closure.body, closure.body.body])
    a = np.random.rand(n).astype("float32")
    _, b = _run(closure, target, a, np.zeros(n, "float32"))
    np.testing.assert_allclose(b, np.where(np.arange(n) < n // 2, a * factor, a), rtol=1e-6)


def test_thread_binding_and_launch_thread_parse():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            tx = T.launch_thread("threadIdx.x", 32)
            A[bx * 32 + tx] = T.float32(0)

    outer = kernel.body
    assert outer.kind == tir.ForKind.THREAD_BINDING
    assert outer.thread_binding.thread_tag == "blockIdx.x" and outer.extent.value == 2
    inner = outer.body
    assert inner.kind == tir.ForKind.THREAD_BINDING
    assert inner.thread_binding.thread_tag == "threadIdx.x" and inner.extent.value == 32
    assert isinstance(inner.body, tir.BufferStore)


def test_unsupported_constructs_raise_naming_them():
    with pytest.raises(RuntimeError, match="slices of buffer 'B'"):
        @T.prim_func
        def sliced(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            B[0:2] = A[0]

    with pytest.raises(ScriptError, match="no_realize=True\\) is not supported"):
        @T.prim_func
        def blocked(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("b", no_realize=True):
                    A[i] = T.float32(0)

    with pytest.raises(ScriptError, match="needs an annotation"):
        @T.prim_func
        def untyped(a):
            T.evaluate(0)

    with pytest.raises(ScriptError, match="2 dimensions, indexed with 1"):
        @T.prim_func
        def wrong_rank(A: T.Buffer((2, 2), "float32")):
            A[0] = T.float32(1)


# ---- printing: func.script() and tvm.script.from_source -------------------------------------
def _round_trip(func, map_free_vars=False):
    text = func.script()
    assert text.startswith("# from tvm.script import tir as T\n@T.prim_func\n")
    again = from_source(text)
    assert_structural_equal(again, func, map_free_vars)
    return text


def test_script_round_trips_a_parsed_function(target):
    @T.prim_func
    def staged(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"), n: T.int32):
        T.func_attr({"global_symbol": "staged", "tir.noalias": True})
        tmp = T.decl_buffer((8,), "int32", scope="local")
        for i in range(8):
            x = A[i] * 3
            if x % 2 == 0 and n > 0:
                tmp[i] = x
            else:
                tmp[i] = T.if_then_else(x > 10, x - 10, T.min(x, n))
        B_flat = T.Buffer((2, 4), "int32", data=B.data)
        for i, j in T.grid(2, 4):
            B_flat[i, j] = tmp[i * 4 + j] + T.truncdiv(n, 2)
        for k in T.parallel(2, 4):
            B[k] = T.Cast("int32", T.float32(1.5) * T.Cast("float32", B[k]))

    text = _round_trip(staged)
    assert "T.decl_buffer((8,), \"int32\", scope=\"local\")" in text
    assert "for k in T.parallel(2, 4):" in text
    a = np.arange(8, dtype="int32")
    _, b, _ = _run(from_source(text), target, a, np.zeros(8, "int32"), 5)
    _, want, _ = _run(staged, target, a, np.zeros(8, "int32"), 5)
    np.testing.assert_array_equal(b, want)


def test_script_of_a_lowered_te_function_round_trips(target):
    n = 16
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.exp(A[i]) * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[B].vectorize(xi)
    func = compiler.lower(s, [A, B], name="f")["f"]
    text = _round_trip(func)
    assert "T.Ramp(" in text and "T.call_intrin(\"float32x4\", \"tir.exp\"" in text
    a = np.random.rand(n).astype("float32")
    _, b = _run(from_source(text), target, a, np.zeros(n, "float32"))
    np.testing.assert_allclose(b, np.exp(a) * 2 + 1, rtol=1e-5)


def test_script_match_buffer_for_strided_buffers_and_errors():
    a = tir.decl_buffer((4, 4), "float32", "A", strides=[tir.Var("s", "int32"), 1])
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL,
                   tir.BufferStore(a, tir.const(0.0), (i, i)))
    func = tir.PrimFunc((a,), body, attrs={"global_symbol": "diag"})
    text = _round_trip(func, map_free_vars=True)  # the stride is a free variable
    assert "def diag(A: T.handle):" in text and "s = T.int32()" in text
    assert "A_1 = T.match_buffer(A, (4, 4), \"float32\", strides=(s, 1))" in text
    with pytest.raises(ScriptError, match="does not support the expression Let"):
        x = tir.Var("x", "int32")
        tir.PrimFunc((), tir.Evaluate(tir.Let(x, tir.const(1), x + 1))).script()
