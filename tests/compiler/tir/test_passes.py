"""Each pass: the IR before, the IR expected after (structural equality), and the same values
before and after in the interpreter."""
import numpy as np

from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.ir.structural_equal import assert_structural_equal
from compiler.tir import (
    Allocate,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    PrimFunc,
    Ramp,
    Select,
    Var,
    decl_buffer,
    interpreter,
    post_order_visit,
    seq,
)
from compiler.tir import expr as E
from compiler.tir.transform.remove_no_op import remove_no_op
from compiler.tir.transform.simplify import simplify
from compiler.tir.transform.storage_flatten import storage_flatten
from compiler.tir.transform.storage_rewrite import storage_rewrite
from compiler.tir.transform.unroll_loop import unroll_loop
from compiler.tir.transform.vectorize import vectorize


def _func(bufs, body):
    params = tuple(Var(b.name, handle) for b in bufs)
    return PrimFunc(params, body, tuple(zip(params, bufs)), {"global_symbol": "f"})


def _mod(bufs, body):
    return IRModule({"f": _func(bufs, body)})


def _same_values(before, after, arrays):
    outs = []
    for mod in (before, after):
        arrs = [a.copy() for a in arrays]
        interpreter.run(mod["f"], *arrs)
        outs.append(arrs)
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)


def test_storage_flatten():
    A = decl_buffer((3, 4), "float32", "A")
    i, j = Var("i"), Var("j")
    before = _mod([A], For(i, E.const(0), E.const(3), ForKind.SERIAL,
                           For(j, E.const(0), E.const(4), ForKind.SERIAL,
                               BufferStore(A, A[i, j] + 1.0, (i, j)))))
    after = storage_flatten(before)
    flat = decl_buffer((12,), "float32", "A", data=A.data)
    expected = _mod([A], For(i, E.const(0), E.const(3), ForKind.SERIAL,
                             For(j, E.const(0), E.const(4), ForKind.SERIAL,
                                 BufferStore(flat, flat[i * 4 + j] + 1.0, (i * 4 + j,)))))
    assert_structural_equal(after["f"].body, expected["f"].body, map_free_vars=True)
    assert after["f"].buffer_map[0][1] is A  # the declared N-d buffer stays in buffer_map
    _same_values(before, after, [np.arange(12, dtype="float32").reshape(3, 4)])


def test_storage_flatten_strided_offset():
    n, s0 = Var("n"), Var("s0")
    A = decl_buffer((n, 2), "float32", "A", strides=[s0, 1])
    i = Var("i")
    store = BufferStore(A, A[i, 1], (i, E.const(0)))
    before = _mod([A], For(i, E.const(0), n, ForKind.SERIAL, store))
    after = storage_flatten(before)
    text = str(simplify(after))
    assert "A[i * s0] = A[i * s0 + 1]" in text
    big = np.arange(15, dtype="float32").reshape(5, 3)
    _same_values(before, after, [big[:, :2]])


def test_simplify_pass():
    A = decl_buffer((8,), "float32", "A")
    i = Var("i")
    before = _mod([A], For(i, E.const(0), E.const(2) * 4, ForKind.SERIAL,
                           BufferStore(A, A[i + 0] * 1.0, (i * 1 + 0,))))
    expected = _mod([A], For(i, E.const(0), E.const(8), ForKind.SERIAL,
                             BufferStore(A, A[i], (i,))))
    assert_structural_equal(simplify(before)["f"].body, expected["f"].body, map_free_vars=True)


def test_vectorize_contiguous():
    A, B = decl_buffer((8,), "float32", "A"), decl_buffer((8,), "float32", "B")
    i, o = Var("i"), Var("o")
    before = _mod([A, B], For(o, E.const(0), E.const(2), ForKind.SERIAL,
                              For(i, E.const(0), E.const(4), ForKind.VECTORIZED,
                                  BufferStore(B, A[o * 4 + i] * 2.0, (o * 4 + i,)))))
    after = vectorize(before)
    r = Ramp(o * 4, E.const(1), 4)
    expected = _mod([A, B], For(o, E.const(0), E.const(2), ForKind.SERIAL,
                                BufferStore(B, A[r] * E.Broadcast(E.const(2.0), 4), (r,))))
    assert_structural_equal(after["f"].body, expected["f"].body, map_free_vars=True)
    _same_values(before, after, [np.arange(8, dtype="float32"), np.zeros(8, "float32")])


def test_vectorize_falls_back_to_serial():
    A = decl_buffer((4,), "float32", "A")
    i = Var("i")
    body = IfThenElse(i > 1, BufferStore(A, A[i] + 1.0, (i,)))
    before = _mod([A], For(i, E.const(0), E.const(4), ForKind.VECTORIZED, body))
    after = vectorize(before)
    expected = _mod([A], For(i, E.const(0), E.const(4), ForKind.SERIAL, body))
    assert_structural_equal(after["f"].body, expected["f"].body, map_free_vars=True)


def test_vectorize_narrows_a_loop_guarded_by_an_upper_bound():
    """`for i in 0..32: if i + (t + 6) * 32 < 197 and B[0] > 0: body`, t a loop of one
    iteration (the tail an uneven split leaves): 5 lanes of vector code under `if B[0] > 0`."""
    A, B = decl_buffer((200,), "float32", "A"), decl_buffer((1,), "float32", "B")
    i, t = Var("i"), Var("t")
    cond = E.And(i + (t + 6) * 32 < 197, B[0] > 0.0)
    body = IfThenElse(cond, BufferStore(A, A[i + 192] + 1.0, (i + 192,)))
    loop = For(t, E.const(0), E.const(1), ForKind.SERIAL,
               For(i, E.const(0), E.const(32), ForKind.VECTORIZED, body))
    before = _mod([A, B], loop)
    after = vectorize(before)
    stores = []
    post_order_visit(after["f"].body,
                     lambda x: stores.append(x) if isinstance(x, BufferStore) else None)
    assert len(stores) == 1 and stores[0].value.dtype.lanes == 5
    for flag in (0.0, 1.0):
        _same_values(before, after, [np.arange(200, dtype="float32"),
                                     np.array([flag], dtype="float32")])


def test_unroll_loop():
    A = decl_buffer((3,), "float32", "A")
    i = Var("i")
    before = _mod([A], For(i, E.const(0), E.const(3), ForKind.UNROLLED,
                           BufferStore(A, A[i] + 1.0, (i,))))
    after = simplify(unroll_loop(before))
    expected = _mod([A], seq(*[BufferStore(A, A[E.const(k)] + 1.0, (E.const(k),))
                               for k in range(3)]))
    assert_structural_equal(after["f"].body, expected["f"].body, map_free_vars=True)
    _same_values(before, after, [np.arange(3, dtype="float32")])


def test_unroll_folds_what_the_index_makes_constant():
    """A select on the unrolled index keeps its one branch in each copy, before any simplify
    (the copies of Winograd transforms would otherwise hold every case)."""
    A = decl_buffer((2,), "float32", "A")
    i = Var("i")
    value = Select(i == 0, A[E.const(0)] + 1.0, A[E.const(1)] * 2.0)
    before = _mod([A], For(i, E.const(0), E.const(2), ForKind.UNROLLED,
                           BufferStore(A, value, (i,))))
    after = unroll_loop(before)
    expected = _mod([A], seq(BufferStore(A, A[E.const(0)] + 1.0, (E.const(0),)),
                             BufferStore(A, A[E.const(1)] * 2.0, (E.const(1),))))
    assert_structural_equal(after["f"].body, expected["f"].body, map_free_vars=True)
    _same_values(before, after, [np.arange(2, dtype="float32")])


def test_unroll_freshens_inner_loop_vars():
    A = decl_buffer((2, 2), "float32", "A")
    i, j = Var("i"), Var("j")
    inner = For(j, E.const(0), E.const(2), ForKind.SERIAL, BufferStore(A, E.const(1.0), (i, j)))
    after = unroll_loop(_mod([A], For(i, E.const(0), E.const(2), ForKind.UNROLLED, inner)))
    loops = after["f"].body.seq
    assert loops[0].loop_var is not loops[1].loop_var


def test_storage_rewrite_reuses_dead_allocation():
    A = decl_buffer((4,), "float32", "A")
    T1, T2 = decl_buffer((4,), "float32", "T1"), decl_buffer((6,), "float32", "T2")
    i = Var("i")

    def loop(dst, src, scale):
        v = Var("i")
        return For(v, E.const(0), E.const(4), ForKind.SERIAL,
                   BufferStore(dst, src[v] * scale, (v,)))

    body = seq(loop(T1, A, 2.0), loop(A, T1, 1.0), loop(T2, A, 3.0), loop(A, T2, 1.0))
    before = _mod([A], Allocate(T1, Allocate(T2, body)))
    after = storage_rewrite(before)
    allocs = []
    from compiler.tir import post_order_visit
    post_order_visit(after["f"].body, lambda n: allocs.append(n) if isinstance(n, Allocate)
                     else None)
    assert len(allocs) == 1 and allocs[0].buffer.shape[0].value == 6
    _same_values(before, after, [np.arange(4, dtype="float32")])
    _ = i


def test_remove_no_op():
    A = decl_buffer((4,), "float32", "A")
    i, j = Var("i"), Var("j")
    store = BufferStore(A, E.const(1.0), (E.const(0),))
    before = _mod([A], seq(For(i, E.const(0), E.const(4), ForKind.SERIAL, Evaluate(E.const(0))),
                           IfThenElse(E.const(False), store),
                           For(j, E.const(0), E.const(0), ForKind.SERIAL, store),
                           store))
    assert_structural_equal(remove_no_op(before)["f"].body, store)


def test_runner_verifies_and_dumps(monkeypatch, capsys):
    from compiler.tir import verifier
    from compiler.tir.pipeline import run_passes

    seen = []
    monkeypatch.setattr(verifier, "verify", lambda m: seen.append(m))
    monkeypatch.setenv("COMPILER_DUMP_IR", "1")
    A = decl_buffer((4,), "float32", "A")
    i = Var("i")
    mod = _mod([A], For(i, E.const(0), E.const(4), ForKind.SERIAL,
                        BufferStore(A, A[i], (i,))))
    out = run_passes(mod, [storage_flatten, remove_no_op])
    assert out is mod and len(seen) == 2
    err = capsys.readouterr().err
    assert "unchanged storage_flatten" in err and "unchanged remove_no_op" in err
