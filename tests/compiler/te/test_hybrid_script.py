"""te.hybrid: scripts parsed into HybridOps, built on the host targets and checked against the
same script run as Python on numpy arrays (and against numpy where it can say)."""
# The scripts' own names (output_tensor, parallel, sqrt, ...) are bound while they run.
# ruff: noqa: F821
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, tir
from compiler.te.hybrid.runtime import HYBRID_GLOBALS


def _build_and_run(outs, ins, arrays, target, sch=None, shapes=None):
    """Builds the schedule of `outs` (a tensor or a list) with `ins` + outs as arguments, runs
    it on `arrays` (one per Tensor of `ins`; Vars take ints), returns the outputs as numpy.
    `shapes`: the outputs' shapes where they are symbolic."""
    outs = outs if isinstance(outs, list) else [outs]
    sch = sch or te.create_schedule(outs[0].op)
    f = compiler.build(sch, list(ins) + outs, target=target)
    nds = [microruntime.nd.array(a) if isinstance(a, np.ndarray) else a for a in arrays]
    shapes = shapes or [[int(s) for s in o.shape] for o in outs]
    results = [microruntime.nd.array(np.zeros(sh, o.dtype)) for sh, o in zip(shapes, outs)]
    f(*nds, *results)
    return [r.numpy() for r in results]


@te.hybrid.script
def outer_product(n, m, a, b):
    """A docstring the parser skips."""
    c = output_tensor((n, m), a.dtype)
    for i in range(n):
        for j in range(m):
            assert i < n and j < m, "index out of range!"
            c[i, j] = a[i] * b[j]
    return c


def test_outer_product_parses_to_loops_and_producer_stores():
    n, m = te.size_var("n"), te.size_var("m")
    a, b = te.placeholder((n,), name="a"), te.placeholder((m,), name="b")
    c = outer_product(n, m, a, b)
    op = c.op
    assert isinstance(op, te.hybrid_op.HybridOp) and op.name == "outer_product"
    assert [iv.var.name for iv in op.axis] == ["i", "j"]
    assert op.input_tensors == [a, b]
    loop = op.body
    assert isinstance(loop, tir.For) and loop.extent is n and loop.body.extent is m
    check, store = loop.body.body.seq
    assert isinstance(check, tir.AssertStmt) and check.message.value == "index out of range!"
    assert isinstance(store, tir.ProducerStore) and store.producer.op.name == "c"
    assert [i.name for i in store.indices] == ["i", "j"]
    assert isinstance(store.value.a, tir.ProducerLoad) and store.value.a.producer is a


def test_outer_product_builds_like_numpy_and_emulation(target):
    n, m = te.size_var("n"), te.size_var("m")
    a, b = te.placeholder((n,), name="a"), te.placeholder((m,), name="b")
    c = outer_product(n, m, a, b)
    x, y = np.random.rand(7).astype("float32"), np.random.rand(5).astype("float32")
    s = te.create_schedule(c.op)
    f = compiler.build(s, [n, m, a, b, c], target=target)
    out = microruntime.nd.array(np.zeros((7, 5), "float32"))
    f(7, 5, microruntime.nd.array(x), microruntime.nd.array(y), out)
    np.testing.assert_allclose(out.numpy(), np.outer(x, y), rtol=1e-6)
    np.testing.assert_allclose(outer_product(7, 5, x, y), np.outer(x, y), rtol=1e-6)


def test_emulation_leaves_the_globals_as_they_were():
    outer_product(2, 2, np.ones(2, "float32"), np.ones(2, "float32"))
    for key in HYBRID_GLOBALS:
        assert key not in globals()
        assert key not in outer_product.__globals__


@te.hybrid.script
def fanout(n, a):
    three = 3.0
    b = output_tensor((a.shape[0] - 3,), a.dtype)
    for i in range(a.shape[0] - 3):
        sigma = 0.0
        for j in range(3):
            sigma += a[i + j]
        sigma = sigma / three
        b[i] = sigma
    return b


def test_variables_are_one_element_buffers_realized_in_their_loop(target):
    n = te.size_var("n")
    a = te.placeholder((n,), name="a")
    b = fanout(n, a)
    realize = b.op.body.body
    assert isinstance(realize, tir.ProducerRealize) and realize.producer.op.name == "sigma"
    scale = realize.body[2].value  # the division by the constant is a multiplication
    assert isinstance(scale, tir.Mul) and abs(scale.b.value - 1 / 3) < 1e-6
    text = tir.to_text(b.op.body)
    assert "realize sigma[0:1] in 'global':" in text and "sigma[0] = sigma[0] + a[i + j]" in text
    x = np.random.rand(10).astype("float32")
    got, = _build_and_run(b, [n, a], [10, x], target, shapes=[(7,)])
    np.testing.assert_allclose(got, np.convolve(x, np.ones(3) / 3, "valid")[:7], rtol=1e-5)
    np.testing.assert_allclose(fanout(10, x), got, rtol=1e-5)


@te.hybrid.script
def branches(a):
    b = output_tensor((10,), "int32")
    c = output_tensor((10,), "int32")
    for i in range(10):
        if 0 <= i < 5 and a[i] > 0:
            c[i] = a[i]
        else:
            c[i] = a[i] * 2 + 1
    for i in unroll(10):
        b[i] = -1 if i % 2 == 0 else 1
    return b, c


def test_conditions_and_selects(target):
    a = te.placeholder((10,), "int32", name="a")
    b, c = branches(a)
    assert b.op is c.op and b.op.num_outputs == 2
    x = np.arange(-3, 7).astype("int32")
    got = _build_and_run([b, c], [a], [x], target)
    want = branches(x)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], np.where((np.arange(10) < 5) & (x > 0), x, 2 * x + 1))
    np.testing.assert_array_equal(got[1], want[1])


def test_loop_kinds_and_math_intrinsics(target):
    @te.hybrid.script
    def kinds(a, k):
        d = output_tensor((16,), "float32")
        e = output_tensor((16,), "int32")
        for i in parallel(16):
            d[i] = sqrt(a[i]) + exp(a[i]) * sigmoid(a[i]) + power(a[i], 2.0) + tanh(a[i])
        for j in vectorize(16):
            e[j] = max(k[j], 3) - min(k[j], 1)
        for q in unroll(4):
            e[q] = popcount(k[q])
        return d, e

    a = te.placeholder((16,), name="a")
    k = te.placeholder((16,), "int32", name="k")
    d, e = kinds(a, k)
    loops = d.op.body.seq
    assert [lp.kind for lp in loops] == [tir.ForKind.PARALLEL, tir.ForKind.VECTORIZED,
                                         tir.ForKind.UNROLLED]
    x = np.random.rand(16).astype("float32") + 0.5
    y = np.array([114514, -1, 7, 0] + list(range(12)), "int32")
    got = _build_and_run([d, e], [a, k], [x, y], target)
    want = kinds(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_array_equal(got[1], want[1])
    assert list(got[1][:4]) == [11, 32, 3, 0]


def test_constant_loops_arrays_and_captured_constants(target):
    offsets = [[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]]
    scale = (2, 3)

    @te.hybrid.script
    def consts(a, b):
        c = output_tensor(a.shape, a.dtype)
        for i in const_range(len(b)):
            for j in const_range(len(b[0])):
                c[i, j] = float32(int32(a[i, j]) + b[i, j]) * scale[1] + offsets[i][j]
        return c

    a = te.placeholder((2, 5), name="a")
    c = consts(a, microruntime.convert(offsets))
    assert c.op.axis == ()  # const_range loops are unrolled while parsing
    x = (np.random.rand(2, 5) * 10).astype("float32")
    got, = _build_and_run(c, [a], [x], target)
    want = (x.astype("int32") + np.array(offsets)) * 3.0 + np.array(offsets)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(consts(x, np.array(offsets)), want, rtol=1e-6)


def test_arrays_of_tensors_are_inputs(target):
    @te.hybrid.script
    def sum_array(inputs):
        out = output_tensor((10,), inputs[0].dtype)
        for i in range(10):
            for j in const_range(len(inputs)):
                out[i] += inputs[j][i]
        return out

    ins = [te.placeholder((10,), name=f"t{k}") for k in range(3)]
    out = sum_array(microruntime.convert(ins))
    assert out.op.input_tensors == ins
    xs = [np.random.rand(10).astype("float32") for _ in ins]
    got, = _build_and_run(out, ins, xs, target)
    np.testing.assert_allclose(got, sum(xs), rtol=1e-6)


def test_a_called_script_is_inlined_after_the_stores_before_it(target):
    @te.hybrid.script
    def caller(a, b):
        for i in range(10):
            a[i] = i + 1.0
        for i in range(10):
            b[i] = i * 2.0
        c = outer_product(10, 10, a, b)
        d = output_tensor(c.shape, c.dtype)
        for i in range(10):
            for j in range(10):
                d[i, j] = c[i, j] + i * j
        return d

    a, b = te.placeholder((10,), name="a"), te.placeholder((10,), name="b")
    d = caller(a, b)
    got, = _build_and_run(d, [a, b], [np.zeros(10, "float32"), np.zeros(10, "float32")], target)
    idx = np.arange(10)
    want = np.outer(idx + 1.0, idx * 2.0) + np.outer(idx, idx)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(caller(np.zeros(10, "float32"), np.zeros(10, "float32")), want)


def test_hybrid_stages_between_compute_stages(target):
    @te.hybrid.script
    def scale_by_index(a):
        b = output_tensor((20,), "float32")
        for i in range(20):
            b[i] = a[i] * i
        return b

    a, b = te.placeholder((20,), name="a"), te.placeholder((20,), name="b")
    c = te.compute((20,), lambda x: a[x] + b[x], name="c")
    d = scale_by_index(c)
    e = te.compute((20,), lambda x: d[x] + 1.0, name="e")
    x, y = np.random.rand(20).astype("float32"), np.random.rand(20).astype("float32")
    got, = _build_and_run(e, [a, b], [x, y], target)
    np.testing.assert_allclose(got, (x + y) * np.arange(20) + 1, rtol=1e-5)


@te.hybrid.script
def outer64(a, b):
    c = output_tensor((64, 64), a.dtype)
    for i in range(64):
        for j in range(64):
            c[i, j] = a[i] * b[j]
    return c


def _scheduled(how):
    a, b = te.placeholder((64,), name="a"), te.placeholder((64,), name="b")
    c = outer64(a, b)
    s = te.create_schedule(c.op)
    i, j = c.op.axis
    if how == "split_reorder":
        io, ii = s[c].split(i, 3)  # 3 does not divide 64: guarded
        jo, ji = s[c].split(j, 4)
        s[c].reorder(io, jo, ii, ji)
        s[c].parallel(io)
        s[c].vectorize(ji)
    elif how == "fuse_split":
        f = s[c].fuse(i, j)
        fo, fi = s[c].split(f, nparts=5)
        s[c].parallel(fo)
    return a, b, c, s


@pytest.mark.parametrize("how", ["split_reorder", "fuse_split"])
def test_schedules_rearrange_the_script_loops(target, how):
    a, b, c, s = _scheduled(how)
    x, y = np.random.rand(64).astype("float32"), np.random.rand(64).astype("float32")
    got, = _build_and_run(c, [a, b], [x, y], target, sch=s)
    np.testing.assert_allclose(got, np.outer(x, y), rtol=1e-6)


def test_split_and_reorder_loop_order():
    a, b, c, s = _scheduled("split_reorder")
    body = compiler.lower(s, [a, b, c])["main"].body
    assert isinstance(body, tir.AttrStmt) and body.key == "extern_scope"
    names = []
    loop = body.body
    while isinstance(loop, tir.For):
        names.append((loop.loop_var.name, loop.kind))
        loop = loop.body
    assert names[:3] == [("i.outer", tir.ForKind.PARALLEL), ("j.outer", tir.ForKind.SERIAL),
                         ("i.inner", tir.ForKind.SERIAL)]


@pytest.mark.parametrize("how", ["none", "split_reorder", "fuse_split"])
def test_build_writes_the_schedule_back_as_a_script(target, how, tmp_path):
    a, b, c, s = _scheduled(how)
    module = te.hybrid.build(s, [a, b], [c])
    src = module.get_source()
    assert src.startswith("def hybrid_func(a, b):") and "output_tensor((64, 64)" in src
    if how == "split_reorder":
        assert "parallel(22)" in src and "vectorize(4)" in src and "likely(" in src
    path = tmp_path / "script"
    module.save(str(path))
    loaded = te.hybrid.HybridModule()
    loaded.load(str(path) + ".py")
    assert loaded.name == "hybrid_func"
    x, y = np.random.rand(64).astype("float32"), np.random.rand(64).astype("float32")
    np.testing.assert_allclose(loaded(x, y), np.outer(x, y), rtol=1e-6)
    c2 = loaded(a, b)  # parsed again into an operation of its own
    assert c2.op is not c.op
    got, = _build_and_run(c2, [a, b], [x, y], target)
    np.testing.assert_allclose(got, np.outer(x, y), rtol=1e-6)


def test_bind_lowers_to_a_thread_binding_loop():
    @te.hybrid.script
    def rows(a):
        c = output_tensor((a.shape[0],), a.dtype)
        total = allocate((1,), a.dtype, "local")
        for i in bind("threadIdx.x", a.shape[0]):
            total[0] = 0.0
            for k in const_range(a.shape[1]):
                total[0] += a[i, k]
            c[i] = total[0]
        return c

    a = te.placeholder((8, 4), name="a")
    c = rows(a)
    attr = c.op.body
    assert isinstance(attr, tir.AttrStmt) and attr.key == "thread_extent"
    assert attr.node.thread_tag == "threadIdx.x" and c.op.axis == ()
    func = compiler.lower(te.create_schedule(c.op), [a, c])["main"]
    loops = []
    tir.post_order_visit(func.body, lambda n: loops.append(n) if isinstance(n, tir.For) else 0)
    assert [lp.kind for lp in loops] == [tir.ForKind.THREAD_BINDING]
    x = np.random.rand(8, 4).astype("float32")
    np.testing.assert_allclose(rows(x), x.sum(axis=1), rtol=1e-6)
    src = te.hybrid.build(te.create_schedule(c.op), [a], [c]).get_source()
    assert "bind('threadIdx.x', 8)" in src and "allocate((1,), 'float32', 'local')" in src
