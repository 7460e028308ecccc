"""Corners of the classic schedule API, with the behaviour classic TVM has: the IterVar kind
constants, te.schedule.AutoInline*, a compute_at axis split or fused afterwards, binding to a
thread axis declared with a range, nested tag scopes, te.compute index parameters, and
arithmetic operators on whole tensors."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.ir.errors import IRError
from compiler.tir.functor import IRVisitor
from compiler.tir.interpreter import run as interpret
from compiler.tir.stmt import For, ForKind


def _loops(mod):
    """Every For of the lowered module, outermost first."""
    found = []

    class V(IRVisitor):
        def visit_For(self, node):
            found.append(node)
            self.generic_visit(node)

    for f in mod.functions.values():
        V().visit(f.body)
    return found


# ---- IterVar kinds -----------------------------------------------------------------------------
def test_iter_var_kind_constants_and_iter_type():
    IV = tir.IterVar
    assert (IV.DataPar, IV.ThreadIndex, IV.CommReduce, IV.Ordered, IV.Opaque, IV.Unrolled,
            IV.Vectorized, IV.Parallelized, IV.Tensorized) == tuple(range(9))
    A = te.placeholder((4,), name="A")
    k = te.reduce_axis((0, 4), name="k")
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
    assert B.op.axis[0].iter_type == IV.DataPar
    assert k.iter_type == IV.CommReduce
    assert te.thread_axis("threadIdx.x").iter_type == IV.ThreadIndex


# ---- te.schedule.AutoInline* -------------------------------------------------------------------
def _elemwise():
    m, n = te.var("m"), te.var("n")
    A, B, C = (te.placeholder((m, n), name=x) for x in "ABC")
    T1 = te.compute((m, n), lambda i, j: A(i, j) * B(i, j), name="T1")
    T2 = te.compute((m, n), lambda i, j: T1(i, j) + C(i, j), name="T2")
    return te.create_schedule(T2.op), T1, [A, B, C, T2]


def _broadcast():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((n,), name="B")
    C = te.placeholder((m, n), name="C")
    T1 = te.compute((m, n), lambda i, j: A(i, j) * B(j), name="T1", tag="broadcast")
    T2 = te.compute((m, n), lambda i, j: T1(i, j) + C(i, j), name="T2")
    return te.create_schedule(T2.op), T1, [A, B, C, T2]


def _injective():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m,), name="A")
    B = te.placeholder((m, n), name="B")
    T1 = te.compute((m,), lambda i: A(m - 1 - i), name="T1")
    T2 = te.compute((m, n), lambda i, j: T1(i) + B(i, j), name="T2")
    return te.create_schedule(T2.op), T1, [A, B, T2]


@pytest.mark.parametrize("make, inline", [
    (_elemwise, te.schedule.AutoInlineElemWise),
    (_broadcast, te.schedule.AutoInlineBroadcast),
    (_injective, te.schedule.AutoInlineInjective),
    (_elemwise, te.schedule.AutoInlineInjective),
])
def test_auto_inline_inlines_the_stage(make, inline):
    s, T1, args = make()
    assert s[T1].attach_type == "root"
    inline(s)
    assert s[T1].attach_type == "inline"
    text = str(lower(s, args))
    assert "T1" not in text


def test_auto_inline_elemwise_leaves_other_stages():
    s, T1, args = _broadcast()  # T1 reads B at (j): not element-wise
    te.schedule.AutoInlineElemWise(s)
    assert s[T1].attach_type == "root"
    s, T1, args = _injective()
    te.schedule.AutoInlineElemWise(s)
    te.schedule.AutoInlineBroadcast(s)
    assert s[T1].attach_type == "root"


def test_auto_inline_leaves_scheduled_stages_outputs_and_reductions():
    s, T1, args = _elemwise()
    s[T1].split(T1.op.axis[0], 4)
    te.schedule.AutoInlineInjective(s)
    assert s[T1].attach_type == "root"
    assert s[args[-1]].attach_type == "root"  # the output
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    R = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="R")
    D = te.compute((4,), lambda i: R[i] * 2.0, name="D")
    s = te.create_schedule(D.op)
    te.schedule.AutoInlineInjective(s)
    assert s[R].attach_type == "root"


def test_auto_inlined_schedule_runs(target):
    s, T1, (A, B, C, T2) = _elemwise()
    te.schedule.AutoInlineElemWise(s)
    f = build(s, [A, B, C, T2], target=target, name="f")
    rng = np.random.default_rng(0)
    a, b, c = (rng.random((3, 5), dtype="float32") for _ in range(3))
    out = runtime.nd.empty((3, 5), "float32")
    f["f"](runtime.nd.array(a), runtime.nd.array(b), runtime.nd.array(c), out)
    np.testing.assert_allclose(out.numpy(), a * b + c, rtol=1e-6)


# ---- compute_at, then the axis is split or fused ------------------------------------------------
def _pair():
    A = te.compute((10, 10), lambda i, j: 1.0, name="A")
    B = te.compute((10, 10), lambda i, j: A[i][j], name="B")
    return A, B, te.create_schedule([B.op])


def test_compute_at_axis_split_afterwards_moves_to_the_inner_part():
    A, B, s = _pair()
    s[A].compute_at(s[B], B.op.axis[1])
    xo, xi = s[B].split(B.op.axis[1], 2)
    mod = lower(s, [A, B])
    loops = _loops(mod)
    names = [lp.loop_var.name for lp in loops]
    # B's loops i, j.outer, j.inner; A is computed in j.inner: one element, no loop of its own
    assert names == ["i", "j.outer", "j.inner"]
    bounds = te.schedule.InferBound(s)
    assert bounds[A.op.axis[0]].extent.value == 1 and bounds[A.op.axis[1]].extent.value == 1
    a, b = np.zeros((10, 10), "float32"), np.zeros((10, 10), "float32")
    interpret(mod["main"], a, b)
    np.testing.assert_array_equal(b, np.ones((10, 10), "float32"))


def test_compute_at_axis_fused_afterwards_moves_to_the_fused_loop():
    A, B, s = _pair()
    s[A].compute_at(s[B], B.op.axis[1])
    s[B].fuse(B.op.axis[0], B.op.axis[1])
    mod = lower(s, [A, B])
    assert [lp.loop_var.name for lp in _loops(mod)] == ["i.j.fused"]
    a, b = np.zeros((10, 10), "float32"), np.zeros((10, 10), "float32")
    interpret(mod["main"], a, b)
    np.testing.assert_array_equal(b, np.ones((10, 10), "float32"))


def test_normalize_moves_the_attach_point():
    A, B, s = _pair()
    s[A].compute_at(s[B], B.op.axis[1])
    xo, xi = s[B].split(B.op.axis[1], 2)
    assert s.normalize()[A].attach_ivar is xi
    assert s[A].attach_ivar is B.op.axis[1]  # the schedule itself is unchanged


# ---- bind to a thread axis declared with a range ------------------------------------------------
def test_bind_to_a_thread_axis_with_a_range():
    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=32)
    thread_x = te.thread_axis((0, 32), "threadIdx.x")
    assert thread_x.thread_tag == "threadIdx.x" and thread_x.dom.extent.value == 32
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, thread_x)
    loops = _loops(lower(s, [A, B]))
    assert [(lp.kind, lp.thread_binding.thread_tag, lp.extent.value) for lp in loops] == \
        [(ForKind.THREAD_BINDING, "blockIdx.x", 32), (ForKind.THREAD_BINDING, "threadIdx.x", 32)]
    assert all(isinstance(lp, For) for lp in loops)
    assert te.schedule.InferBound(s)[thread_x].extent.value == 32


def test_thread_axis_argument_orders():
    named = te.thread_axis((0, 8), "threadIdx.y", "ty")
    assert (named.thread_tag, named.var.name, named.dom.extent.value) == ("threadIdx.y", "ty", 8)
    assert te.thread_axis("blockIdx.x").dom is None
    assert te.thread_axis(tag="threadIdx.x", dom=(0, 4)).dom.extent.value == 4


# ---- tag scopes ---------------------------------------------------------------------------------
def test_nested_tag_scopes_raise_a_value_error():
    with te.tag_scope("outer"):
        with pytest.raises(ValueError, match="do not nest"):
            with te.tag_scope("inner"):
                pass
        with pytest.raises(IRError):  # a tag given inside a scope, too
            te.compute((2,), lambda i: i, tag="inner")
        assert te.compute((2,), lambda i: i).op.tag == "outer"
    assert te.compute((2,), lambda i: i).op.tag == ""


# ---- te.compute index parameters ----------------------------------------------------------------
def test_compute_with_star_indices():
    A = te.placeholder((3, 4), name="A")
    B = te.compute((3, 4), lambda *i: A(*i) + 1.0, name="B")
    assert [iv.var.name for iv in B.op.axis] == ["i0", "i1"]
    C = te.compute((3, 4), lambda i, *rest: A(i, *rest) * 2.0, name="C")
    assert [iv.var.name for iv in C.op.axis] == ["i", "i0"]
    s = te.create_schedule(C.op)
    a, c = np.arange(12, dtype="float32").reshape(3, 4), np.zeros((3, 4), "float32")
    interpret(lower(s, [A, C])["main"], a, c)
    np.testing.assert_array_equal(c, a * 2)


def test_compute_with_fewer_named_indices_takes_the_leading_dimensions():
    A = te.placeholder((3, 4), name="A")
    B = te.compute((3, 4), lambda i: A[i, 0] + A[i, 3], name="B")
    assert [int(d) for d in B.shape] == [3] and len(B.op.axis) == 1
    s = te.create_schedule(B.op)
    a, b = np.arange(12, dtype="float32").reshape(3, 4), np.zeros(3, "float32")
    interpret(lower(s, [A, B])["main"], a, b)
    np.testing.assert_array_equal(b, a[:, 0] + a[:, 3])
    with pytest.raises(IRError, match="takes 3 indices"):
        te.compute((3, 4), lambda i, j, k: A[i, j])


# ---- arithmetic on whole tensors ----------------------------------------------------------------
def test_operator_types_and_tags():
    k, n = 1, te.var("n")
    A = te.placeholder((), name="A")
    B = te.placeholder((10, 5), name="B")
    B2 = B[0, 0]
    assert isinstance(k + n, tir.PrimExpr) and isinstance(n + n, tir.PrimExpr)
    for t in (k + A, A + k, A + n, A + A, k + B, B + k, B + n, A + B, B + A, B + B, A + B2,
              B + B2):
        assert isinstance(t, te.Tensor)
    for t in (k + B, B + k, B + n, 2.0 * B, B / 2, 1 - B, -B, B + B2):
        assert t.op.tag == "elemwise"
    for t in (A + B, B + A, B + B):
        assert t.op.tag == "broadcast"
    for t in (k + B2, B2 + k, n + B2, B2 + n, B2 + B2):
        assert isinstance(t, tir.PrimExpr)
    assert [(1 + B).op.name, (B - 1).op.name, (B * 2).op.name, (B / 2).op.name] == \
        ["T_add", "T_subtract", "T_multiply", "T_divide"]


def test_expression_left_of_a_tensor():
    n = te.var("n")
    B = te.placeholder((10, 5), name="B")
    assert isinstance(n + B, te.Tensor) and isinstance(B[0, 0] + B, te.Tensor)


def test_broadcasting_shapes():
    B = te.placeholder((10, 5), name="B")
    row = te.placeholder((5,), name="row")
    col = te.placeholder((10, 1), name="col")
    assert [int(d) for d in (B * row).shape] == [10, 5]
    assert [int(d) for d in (col + row).shape] == [10, 5]
    with pytest.raises(IRError, match="do not broadcast"):
        B + te.placeholder((3,), name="C")


def test_tensor_expression_combination_runs(target):
    k, n, m = 3, 5, 10
    x = te.var("x")
    A, B, C = (te.placeholder((n, m), name=t) for t in "ABC")
    D = k + A - B * C + x
    s = te.create_schedule(D.op)
    f = build(s, [x, A, B, C, D], target=target, name="f")
    rng = np.random.default_rng(0)
    a, b, c = (rng.random((n, m), dtype="float32") for _ in range(3))
    d = runtime.nd.empty((n, m), "float32")
    f["f"](2, runtime.nd.array(a), runtime.nd.array(b), runtime.nd.array(c), d)
    np.testing.assert_allclose(d.numpy(), k + a - b * c + 2, rtol=1e-5)


def test_broadcast_operator_runs(target):
    A = te.placeholder((4, 3), name="A")
    R = te.placeholder((3,), name="R")
    D = A / R - 1.0
    s = te.create_schedule(D.op)
    f = build(s, [A, R, D], target=target, name="f")
    rng = np.random.default_rng(1)
    a, r = rng.random((4, 3), dtype="float32"), rng.random(3, dtype="float32") + 1
    d = runtime.nd.empty((4, 3), "float32")
    f["f"](runtime.nd.array(a), runtime.nd.array(r), d)
    np.testing.assert_allclose(d.numpy(), a / r - 1, rtol=1e-5)


# ---- fusing a data axis with a reduction axis ---------------------------------------------------
def test_fuse_data_and_reduction_axis_is_a_reduction_and_runs(target):
    n = 10
    X = te.placeholder((n,), dtype="int32", name="X")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((n, 3), lambda i, j: te.sum(X[k] * (i + 1) + j, axis=k), name="Y")
    s = te.create_schedule(Y.op)
    i, j = Y.op.axis
    s[Y].reorder(i, k, j)
    fused = s[Y].fuse(i, k)
    assert fused.iter_type == te.schedule.IterVar.CommReduce
    f = build(s, [Y, X], target=target, name="f")
    x = np.arange(n, dtype="int32")
    out = runtime.nd.array(np.full((n, 3), 7, dtype="int32"))
    f["f"](out, runtime.nd.array(x))
    expected = x.sum() * (np.arange(n) + 1)[:, None] + n * np.arange(3)[None, :]
    np.testing.assert_array_equal(out.numpy(), expected)


def test_fuse_no_axes_of_a_scalar_reduction_then_split(target):
    n = 10
    X = te.placeholder((n,), dtype="int32", name="X")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((), lambda: te.sum(X[k], axis=k), name="Y")
    s = te.create_schedule(Y.op)
    unit = s[Y].fuse()
    s[Y].split(unit, nparts=20)
    f = build(s, [Y, X], target=target, name="f")
    out = runtime.nd.empty((), "int32")
    f["f"](out, runtime.nd.array(np.ones(n, dtype="int32")))
    assert out.numpy() == n
