"""The statement simplifier: before and after IR."""
from compiler.arith import simplify
from compiler.ir import assert_structural_equal
from compiler.tir import (
    AssertStmt,
    AttrStmt,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IterVar,
    LetStmt,
    PrimFunc,
    Range,
    Var,
    const,
    decl_buffer,
    no_op,
    seq,
)

A = decl_buffer((64,), "float32", "A")
i, j = Var("i"), Var("j")


def loop(var, extent, body, lo=0):
    return For(var, const(lo), const(extent), ForKind.SERIAL, body)


def store(index, value=1.0):
    return BufferStore(A, const(value), (index,))


def test_loop_bounds_simplify_body():
    before = loop(i, 8, loop(j, 8, store((i * 8 + j) // 8 * 8 + (i * 8 + j) % 8)))
    after = loop(i, 8, loop(j, 8, store(i * 8 + j)))
    assert_structural_equal(simplify(before), after, map_free_vars=True)


def test_if_true_removed_and_if_false_dropped():
    before = loop(i, 8, seq(IfThenElse(i < 8, store(i)), IfThenElse(i >= 8, store(i + 1))))
    after = loop(i, 8, store(i))
    assert_structural_equal(simplify(before), after)


def test_extent_zero_and_one_loops():
    before = seq(loop(i, 0, store(i)), loop(j, 1, store(j + 2), lo=3))
    assert_structural_equal(simplify(before), store(const(5)))


def test_let_and_assert():
    k = Var("k")
    before = LetStmt(k, const(4), AssertStmt(k < 5, "ValueError", ("bad",), store(k)))
    assert_structural_equal(simplify(before), store(const(4)))


def test_thread_extent_binds_the_thread_var():
    tx = IterVar(Range.from_min_extent(0, 32), Var("tx"), "thread", "threadIdx.x")
    before = AttrStmt(tx, "thread_extent", const(32), IfThenElse(tx.var < 32, store(tx.var)))
    after = AttrStmt(tx, "thread_extent", const(32), store(tx.var))
    assert_structural_equal(simplify(before), after)


def test_primfunc_and_unchanged_identity():
    body = loop(i, 8, store(i))
    f = PrimFunc((A.data,), body, ((A.data, A),))
    assert simplify(f) is f
    assert simplify(no_op()) is not None


def test_recursion_limit_restored():
    """simplify raises the recursion limit for deep trees only while it runs."""
    import sys

    before = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)
    try:
        total = i
        for k in range(1, 400):  # a deep Add chain
            total = total + k
        assert simplify(total) is not None
        assert sys.getrecursionlimit() == 3000
        simplify(loop(i, 4, store(i)))
        assert sys.getrecursionlimit() == 3000
    finally:
        sys.setrecursionlimit(before)
