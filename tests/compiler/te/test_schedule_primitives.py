"""Every schedule primitive changes the loop nest as expected and keeps the values."""
import numpy as np
import pytest

from compiler import build, te
from compiler.ir.errors import ScheduleError
from compiler.tir import For, ForKind, post_order_visit
from compiler.transform import PassContext
from microruntime import nd


def _elementwise(m=6, n=8):
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return A, B, te.create_schedule(B.op)


def _check(run, s, A, B, rng):
    a = rng.random(tuple(int(x.value) for x in A.shape), dtype="float32")
    b = np.zeros_like(a)
    text = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    return text


def _loops(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("for ")]


def test_axes_and_leaf_iter_vars():
    A, B, s = _elementwise()
    i, j = s[B].op.axis
    assert [iv.name for iv in s[B].leaf_iter_vars] == ["i", "j"]
    xo, xi = s[B].split(i, factor=2)
    assert [iv.name for iv in s[B].leaf_iter_vars] == ["i.outer", "i.inner", "j"]
    assert s[B].op.reduce_axis == ()


def test_split_factor_and_nparts(run, rng):
    A, B, s = _elementwise()
    s[B].split(B.op.axis[0], factor=3)
    s[B].split(B.op.axis[1], nparts=2)
    text = _check(run, s, A, B, rng)
    assert _loops(text) == ["for i.outer in range(2):", "for i.inner in range(3):",
                            "for j.outer in range(2):", "for j.inner in range(4):"]


def test_fuse(run, rng):
    A, B, s = _elementwise()
    f = s[B].fuse(*B.op.axis)
    assert f.name == "i.j.fused"
    text = _check(run, s, A, B, rng)
    assert _loops(text) == ["for i.j.fused in range(48):"]


def test_reorder(run, rng):
    A, B, s = _elementwise()
    i, j = B.op.axis
    s[B].reorder(j, i)
    assert _loops(_check(run, s, A, B, rng)) == ["for j in range(8):", "for i in range(6):"]


def test_tile(run, rng):
    A, B, s = _elementwise()
    xo, yo, xi, yi = s[B].tile(*B.op.axis, 3, 4)
    assert [iv.name for iv in s[B].leaf_iter_vars] == ["i.outer", "j.outer", "i.inner", "j.inner"]
    _check(run, s, A, B, rng)


@pytest.mark.parametrize("prim, marker", [("parallel", "# parallel"), ("unroll", None),
                                          ("vectorize", "ramp(")])
def test_annotations(run, rng, prim, marker):
    A, B, s = _elementwise()
    i, j = B.op.axis
    getattr(s[B], prim)(j if prim != "parallel" else i)
    text = _check(run, s, A, B, rng)
    if prim == "unroll":
        assert "for j" not in text and text.count("B[") == 8
    else:
        assert marker in text


def test_bind_gives_thread_binding_loops():
    from compiler import lower

    A, B, s = _elementwise()
    bx, tx = te.thread_axis("blockIdx.x"), te.thread_axis("threadIdx.x")
    s[B].bind(B.op.axis[0], bx)
    s[B].bind(B.op.axis[1], tx)
    mod = lower(s, [A, B], name="f")
    loops = []
    post_order_visit(mod["f"].body, lambda n: loops.append(n) if isinstance(n, For) else None)
    assert {lp.kind for lp in loops} == {ForKind.THREAD_BINDING}
    assert sorted(lp.thread_binding.thread_tag for lp in loops) == ["blockIdx.x", "threadIdx.x"]
    assert "# thread_binding threadIdx.x" in str(mod)


def test_pragma(run, rng):
    A, B, s = _elementwise()
    s[B].pragma(B.op.axis[0], "auto_unroll_max_step", 16)
    text = _check(run, s, A, B, rng)
    assert "with attr(i, 'pragma_auto_unroll_max_step', 16):" in text


def _prefetched(offset=2):
    """B = A * 2 + 1 over 16 x 64, rows of 4 vectors of 16, A prefetched `offset` rows ahead."""
    A, B, s = _elementwise(16, 64)
    _, ji = s[B].split(B.op.axis[1], factor=16)
    s[B].vectorize(ji)
    s[B].prefetch(A, B.op.axis[0], offset)
    return A, B, s


def test_prefetch_reads_ahead(run, rng):
    """Each vector read of A is preceded by a prefetch of the line the row `offset` rows on
    reads there (the last rows fetch their own); the values are unchanged."""
    A, B, s = _prefetched()
    text = _check(run, s, A, B, rng)
    assert "tir.prefetch(tir.address_of(A[min(i + 2, 15) * 64 + j.outer * 16]), 0, 1, 1)" \
        in text
    assert text.count("tir.prefetch") == 1 and "prefetch_scope" not in text


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_prefetch_builds(rng, target):
    A, B, s = _prefetched(offset=3)
    f = build(s, [A, B], target=target, name="f")
    a = rng.random((16, 64), dtype="float32")
    b = nd.array(np.zeros_like(a))
    f["f"](nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_prefetch_skips_reads_the_loop_does_not_move(run, rng):
    """A read whose index does not depend on the loop is fetched already: no prefetch."""
    A = te.placeholder((16,), name="A")
    B = te.compute((4, 16), lambda i, j: A[j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].prefetch(A, B.op.axis[0], 1)
    a, b = rng.random(16, dtype="float32"), np.zeros((4, 16), "float32")
    text = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, np.broadcast_to(a + 1, (4, 16)), rtol=1e-6)
    assert "tir.prefetch" not in text and "prefetch_scope" not in text


def test_prefetch_off_when_its_pass_is_disabled(run, rng):
    A, B, s = _prefetched()
    with PassContext(disabled_pass=["tir.InjectPrefetch"]):
        text = _check(run, s, A, B, rng)
    assert "tir.prefetch" not in text


def test_prefetch_needs_a_tensor():
    A, B, s = _elementwise()
    with pytest.raises(ScheduleError, match="prefetch on stage 'B': 3 is not a tensor"):
        s[B].prefetch(3, B.op.axis[0], 1)


def test_compute_inline(run, rng):
    A = te.placeholder((5, 3), name="A")
    T = te.compute((5, 3), lambda i, j: A[i, j] + 1.0, name="T")
    B = te.compute((5, 3), lambda i, j: te.exp(T[i, j]), name="B")
    s = te.create_schedule(B.op)
    s[T].compute_inline()
    a, b = rng.random((5, 3), dtype="float32"), np.zeros((5, 3), "float32")
    text = run(s, [A, B], [a, b])
    assert "allocate" not in text and "tir.exp(A[" in text
    np.testing.assert_allclose(b, np.exp(a + 1), rtol=1e-6)


def test_compute_root_undoes_compute_at(run, rng):
    A = te.placeholder((8,), name="A")
    T = te.compute((8,), lambda i: A[i] + 1.0, name="T")
    B = te.compute((8,), lambda i: T[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    s[T].compute_at(s[B], B.op.axis[0])
    s[T].compute_root()
    a, b = rng.random(8, dtype="float32"), np.zeros(8, "float32")
    text = run(s, [A, B], [a, b])
    assert text.index("T = allocate([8]") < text.index("for i")
    np.testing.assert_allclose(b, (a + 1) * 2, rtol=1e-6)


def test_inner_axis_split_again_is_guarded(run, rng):
    """k (6) split by 3, then k.inner (3) split by 2: k.inner reaches 3 while k stays below 6,
    so without a guard on k.inner the element k = 3 is summed twice."""
    A = te.placeholder((6,), name="A")
    k = te.reduce_axis((0, 6), name="k")
    S = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="S")
    s = te.create_schedule(S.op)
    _, ki = s[S].split(k, factor=3)
    s[S].split(ki, factor=2)
    a = rng.random(6, dtype="float32")
    out = np.zeros(1, "float32")
    text = run(s, [A, S], [a, out])
    assert "k.inner.outer * 2 + k.inner.inner < 3" in text
    np.testing.assert_allclose(out, [a.sum()], rtol=1e-6)


def test_compute_at_region_of_an_inner_axis_split_again(run, rng):
    """i.inner (extent 1) split by 2 must not run i.inner.inner = 1: that iteration reads the
    producer B outside the one element computed at i.outer."""
    A = te.placeholder((2, 1), name="A")
    B = te.compute((2, 1), lambda i, j: A[i, j] * 3.0, name="B")
    C = te.compute((2, 1), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    io, ii = s[C].split(C.op.axis[0], factor=1)
    s[C].split(ii, factor=2)
    s[B].compute_at(s[C], io)
    a = rng.random((2, 1), dtype="float32")
    out = np.zeros((2, 1), "float32")
    run(s, [A, C], [a, out])  # the interpreter checks every access against the allocation
    np.testing.assert_allclose(out, a * 3 + 1, rtol=1e-6)
