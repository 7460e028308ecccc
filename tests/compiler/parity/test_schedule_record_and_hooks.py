"""Classic schedule corners, as TVM v0.12 behaves: the schedule record
(`te.keep_schedule_record`), attach types compared with TVM's codes, TVM's fields of an
Allocate, cache_write of a reduction whose range reads the output axis, SeqStmt indexing,
structural_equal of an expression and a number, and tensorize's testing hooks
(`test.op.InferTensorizeRegion`, `test.op.MatchTensorizeBody`)."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, tir
from compiler.ir import structural_equal
from compiler.transform import PassContext, PassContextError


def _matmul(n=64):
    k = te.reduce_axis((0, n), "k")
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


def test_schedule_record_keeps_a_copy_after_each_primitive():
    A, B, C, k = _matmul()
    assert te.create_schedule(C.op).schedule_record == []
    with PassContext(config={"te.keep_schedule_record": True}):
        s = te.create_schedule(C.op)
        assert s.primitive_record == ["vanilla"]
        mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 16)
        ko, ki = s[C].split(k, factor=8)
        s[C].reorder(mo, ko, no, mi, ki, ni)
        s[C].vectorize(ni)
        s[C].parallel(mo)
    assert s.primitive_record == ["vanilla", "split", "split", "reorder", "split", "reorder",
                                  "vectorize", "parallel"]
    assert len(s.schedule_record) == 8
    # each copy is the schedule as it was: the vanilla one still lowers to 3 plain loops
    vanilla = compiler.lower(s.schedule_record[0], [A, B, C])["main"]
    loops = []
    tir.post_order_visit(vanilla.body, lambda n: loops.append(n)
                         if isinstance(n, tir.For) else None)
    assert len(loops) == 3 and all(lp.kind == "serial" for lp in loops)  # i, j, k
    assert len(s.schedule_record[3].stages[-1].leaf_iter_vars) == 5
    with pytest.raises(PassContextError, match="takes a bool"):
        PassContext(config={"te.keep_schedule_record": "yes"})


def test_attach_type_compares_with_tvm_codes():
    A = te.placeholder((8,), name="A")
    T1 = te.compute((8,), lambda i: A[i] * 2, name="T1")
    T2 = te.compute((8,), lambda i: T1[i] + 1, name="T2")
    s = te.create_schedule(T2.op)
    assert s[T1].attach_type == 1 and s[T1].attach_type == "root"
    s[T1].compute_inline()
    assert s[T1].attach_type == 2 and s[T1].attach_type != 1
    s[T1].compute_at(s[T2], T2.op.axis[0])
    assert s[T1].attach_type == 4 and s[T1].attach_type == "scope"


def test_allocate_has_tvm_fields():
    buf = tir.decl_buffer((97, 3), "float16", "tmp", scope="local")
    a = tir.Allocate(buf, tir.Evaluate(0))
    assert [e.value for e in a.extents] == [97, 3]
    assert a.dtype == "float16" and a.buffer_var is buf.data


def test_seq_stmt_indexes_its_statements():
    s = tir.SeqStmt((tir.Evaluate(tir.const(1)), tir.Evaluate(tir.const(2))))
    assert s[1].value.value == 2 and len(s) == 2 and bool(tir.SeqStmt(()))


def test_structural_equal_converts_a_number_side():
    assert structural_equal(tir.const(16), 16)
    assert not structural_equal(tir.const(16), 17)
    assert not structural_equal(tir.const(16, "int64"), 16)
    assert structural_equal(tir.const(1.5), 1.5)


def test_cache_write_of_a_reduction_over_an_axis_dependent_range(target):
    X = te.placeholder((10,), name="X")

    def f(n):
        rv = te.reduce_axis((0, n))
        return te.sum(X[rv], axis=rv)

    Y = te.compute((10,), f, name="Y")
    s = te.create_schedule(Y.op)
    s.cache_write(Y, "local")
    fn = compiler.build(s, [X, Y], target)
    x = np.random.rand(10).astype("float32")
    y = runtime.nd.array(np.zeros(10, "float32"))
    fn(runtime.nd.array(x), y)
    want = np.array([x[:n].sum() for n in range(10)], dtype="float32")
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)


def _vadd(factor):
    x = te.placeholder((factor,), name="vx")
    y = te.placeholder((factor,), name="vy")
    z = te.compute((factor,), lambda i: x[i] + y[i], name="z")
    return te.decl_tensor_intrin(
        z.op, lambda ins, outs: tir.call_packed("vadd", ins[0], ins[1], outs[0]),
        default_buffer_params={"offset_factor": factor})


def test_tensorize_hooks_give_the_region_and_the_matched_body():
    x = te.placeholder((128,), name="x")
    y = te.placeholder((128,), name="y")
    z = te.compute((128,), lambda i: x[i] + y[i], name="z")
    s = te.create_schedule(z.op)
    xo, xi = s[z].split(z.op.axis[0], factor=16)
    vadd = _vadd(16)
    s[z].tensorize(xi, vadd)
    s = s.normalize()
    dom_map = te.schedule.InferBound(s)
    out_dom, in_dom = runtime.get_global_func("test.op.InferTensorizeRegion")(s[z], dom_map)
    assert structural_equal(out_dom[z.op.axis[0]].extent, 16)
    assert structural_equal(out_dom[z.op.axis[0]].min, xo.var * 16)
    regions = dict(in_dom.items())
    assert set(regions) == {x, y}
    assert all(structural_equal(r[0].extent, 16) for r in regions.values())
    body = runtime.get_global_func("test.op.MatchTensorizeBody")(s[z], out_dom, in_dom, vadd)
    assert structural_equal(compiler.arith.Analyzer().simplify(body[0]),
                            compiler.arith.Analyzer().simplify(vadd.op.body[0]))


def test_intrinsic_compute_may_read_the_stage_outer_axis():
    m, factor = 40, 16
    x = te.placeholder((m,), name="x")
    y = te.placeholder((m,), name="y")
    z = te.compute((m,), lambda i: x[i] + y[i], name="z")
    s = te.create_schedule(z.op)
    s[z].split(z.op.axis[0], factor=factor)
    zc = s.cache_write(z, "global")
    xo, xi = zc.op.axis
    vx = te.placeholder((factor,), name="vx")
    vy = te.placeholder((factor,), name="vy")
    guarded = te.compute((factor,), lambda i: tir.Select(xo * factor + i < m, vx[i] + vy[i],
                                                          tir.const(0.0)), name="vz")
    intrin = te.decl_tensor_intrin(
        guarded.op, lambda ins, outs: tir.call_packed("vadd", ins[0], ins[1], outs[0]),
        default_buffer_params={"offset_factor": factor})
    s[zc].tensorize(xi, intrin)
    calls = []
    tir.post_order_visit(compiler.lower(s, [x, y, z])["main"].body,
                         lambda n: calls.append(n) if isinstance(n, tir.Call)
                         and n.op == "tir.call_packed" else None)
    assert len(calls) == 1


def test_placeholder_argument_nothing_reads_is_an_unused_parameter(target):
    A = te.placeholder((4,), name="A", dtype="int32")
    B = te.placeholder((3,), name="B", dtype="int32")
    D, M = te.compute((4, 3), lambda i, j: (tir.truncdiv(tir.const(-7), B[j]),
                                             tir.truncmod(tir.const(-7), B[j])), name="DM")
    s = te.create_schedule([D.op, M.op])
    f = compiler.build(s, [A, B, D, M], target)
    b = np.array([2, -3, 5], "int32")
    d = runtime.nd.array(np.zeros((4, 3), "int32"))
    m = runtime.nd.array(np.zeros((4, 3), "int32"))
    f(runtime.nd.array(np.zeros(4, "int32")), runtime.nd.array(b), d, m)
    np.testing.assert_array_equal(d.numpy(), np.broadcast_to(np.trunc(-7 / b), (4, 3)))
    np.testing.assert_array_equal(m.numpy(), np.broadcast_to(np.fmod(-7, b), (4, 3)))
    with pytest.raises(compiler.ir.errors.ScheduleError, match="not a tensor of this schedule"):
        other = te.compute((4,), lambda i: A[i] + 1, name="other")
        compiler.lower(s, [B, D, M, other])
