"""Classic TVM te/tir API that unchanged TVM code relies on: te.schedule's graph and lowering
functions (ScheduleOps, CreateReadGraph/PostDFSOrder, the relation and
tir class names), schedule_to_module, stage annotations read back (iter_var_attrs), and the
tir.stmt_functor functions."""
import pytest

import microruntime
from compiler import te, tir
from compiler.driver import schedule_to_module
from compiler.ir import container
from compiler.tir import stmt_functor


def _add_one():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1, name="B")
    return A, B


def test_schedule_to_module_is_the_unlowered_function():
    A, B = _add_one()
    s = te.create_schedule(B.op)
    mod = schedule_to_module(s, [A, B], name="f")
    func = mod["f"]
    assert isinstance(func, tir.PrimFunc)
    assert len(func.params) == 2
    loops = []
    stmt_functor.post_order_visit(func.body, lambda x: loops.append(x)
                                  if isinstance(x, tir.For) else None)
    assert len(loops) == 1


def test_schedule_ops_gives_the_loop_nest():
    A, B = _add_one()
    s = te.create_schedule(B.op)
    s[B].split(B.op.axis[0], factor=4)
    stmt = te.schedule.ScheduleOps(s, te.schedule.InferBound(s))
    loops = []
    stmt_functor.post_order_visit(stmt, lambda x: loops.append(x)
                                  if isinstance(x, tir.For) else None)
    assert len(loops) == 2


def test_schedule_ops_realizes_every_output_of_a_multi_output_stage():
    m, n = te.size_var("m"), te.size_var("n")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] * 2, A1[i, j] * 3), name="B")
    C = te.compute((m, n), lambda i, j: B0[i, j] + 4, name="C")
    s = te.create_schedule(C.op)
    xo, _ = s[C].split(C.op.axis[0], factor=10)
    s[B0.op].compute_at(s[C], xo)
    stmt = te.schedule.ScheduleOps(s.normalize(), te.schedule.InferBound(s))
    # the output is realized around everything, B's two outputs inside C's outer loop
    assert isinstance(stmt, tir.ProducerRealize) and stmt.producer == C
    assert isinstance(stmt.body, tir.For) and stmt.body.loop_var is xo.var
    realized = []
    stmt_functor.post_order_visit(stmt, lambda x: realized.append(x)
                                  if isinstance(x, tir.ProducerRealize) else None)
    by_index = {r.producer.value_index: r for r in realized if r.producer.op == B0.op}
    assert sorted(by_index) == [0, 1]
    assert [str(r.extent) for r in by_index[1].bounds] == ["10", "n"]


def test_ir_container_names_the_runtime_containers():
    assert container.Map is microruntime.Map and container.Array is microruntime.Array


def test_read_graph_and_post_order():
    A, B = _add_one()
    C = te.compute(B.shape, lambda i: B[i] * 2, name="C")
    g = te.schedule.CreateReadGraph([C.op])
    assert g[C.op][0] == B
    assert g[B.op][0] == A
    assert list(te.schedule.PostDFSOrder([C.op], g)) == [A.op, B.op, C.op]


def test_schedule_module_names_relations_and_tir_classes():
    A, B = _add_one()
    s = te.create_schedule(B.op)
    s[B].fuse(*s[B].split(B.op.axis[0], factor=2))
    assert any(isinstance(r, te.schedule.Fuse) for r in s[B].relations)
    assert any(isinstance(r, te.schedule.Split) for r in s[B].relations)
    assert te.schedule.Buffer is tir.Buffer
    assert te.schedule.IterVar is tir.IterVar


def test_iter_var_attrs_read_back_annotations():
    A, B = _add_one()
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[B].unroll(xo)
    s[B].pragma(xi, "vectorize")        # the key "vectorize" is the annotation itself
    attrs = s[B].iter_var_attrs
    assert attrs[xo].iter_type == tir.IterVar.Unrolled
    assert attrs[xi].iter_type == tir.IterVar.Vectorized
    s[B].pragma(xo, "my_pragma", 3)
    assert attrs[xo].iter_type == tir.IterVar.Unrolled
    assert s[B].iter_var_attrs[xo].pragma_keys[0].value == "my_pragma"
    assert s[B].iter_var_attrs[xo].pragma_values[0].value == 3


def test_vectorize_refuses_a_reduction_axis():
    V = te.placeholder((128,), name="V")
    k = te.reduce_axis((0, 128), name="k")
    O = te.compute((1,), lambda _: te.sum(V[k], axis=[k]), name="O")
    s = te.create_schedule(O.op)
    with pytest.raises(RuntimeError, match="reduction axis 'k'"):
        s[O].vectorize(k)


def test_ir_transform_pre_and_post_order():
    n = te.var("n")
    buf = tir.decl_buffer((n,), "float32", name="buf")
    i = te.var("i")
    loop = tir.For(i, 0, n, "serial", tir.BufferStore(buf, tir.FloatImm("float32", 1.0), [i]))
    seen = []

    def post(node):
        seen.append(type(node).__name__)
        if isinstance(node, tir.For):
            return tir.For(node.loop_var, node.min, node.extent, "unrolled", node.body)
        return None

    out = stmt_functor.ir_transform(loop, None, post, ["tir.For"])
    assert out.kind == "unrolled" and seen == ["For"]
    replaced = stmt_functor.ir_transform(loop, lambda node: node.body, None, ["tir.For"])
    assert isinstance(replaced, tir.BufferStore)


def test_pre_order_visit_visits_parents_first_and_can_stop():
    i = te.var("i")
    e = (i + 1) * 2
    order = []
    stmt_functor.pre_order_visit(e, lambda x: order.append(type(x).__name__))
    assert order[:2] == ["Mul", "Add"]
    stopped = []
    stmt_functor.pre_order_visit(e, lambda x: stopped.append(x) or False)
    assert len(stopped) == 1


def test_an_iter_var_compares_as_an_expression_of_its_variable():
    """As TVM's IterVar (an expression): `r == 0` builds EQ on r's variable, usable in a
    select; in an `if` (and as a dict key) it answers identity."""
    r = te.reduce_axis((0, 3), name="r")
    cond = r == 0
    assert not isinstance(cond, bool)
    assert str(te.select(cond, 1.0, 2.0)) == "select(r == 0, 1.0, 2.0)"
    assert bool(r == r) and not bool(r == te.reduce_axis((0, 3), name="r"))
    assert {r: 1}[r] == 1
