"""te.create_prim_func: TE graphs as PrimFuncs of TensorIR blocks, compared with hand-written
TVMScript, built for llvm and c and checked against numpy, and the mistakes it names."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, tir
from compiler.ir.errors import ScheduleError
from compiler.ir.structural_equal import assert_structural_equal, structural_equal
from compiler.script import from_source
from compiler.script import tir as T


def _matmul(n=16):
    k = te.reduce_axis((0, n), "k")
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C")
    return A, B, C


def _chain(n=16):
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda x, y: A[x, y] * 2, name="B")
    C = te.compute((n, n), lambda x, y: B[x, y] + 1, name="C")
    return A, C


@T.prim_func
def _matmul_script(a: T.handle, b: T.handle, c: T.handle) -> None:
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    A = T.match_buffer(a, (16, 16))
    B = T.match_buffer(b, (16, 16))
    C = T.match_buffer(c, (16, 16))
    for i0, j0, k0 in T.grid(16, 16, 16):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, j0, k0])
            with T.init():
                C[i, j] = 0.0
            C[i, j] += A[i, k] * B[j, k]


@T.prim_func
def _chain_script(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")) -> None:
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((16, 16))
    for i0, j0 in T.grid(16, 16):
        with T.block("B"):
            i, j = T.axis.remap("SS", [i0, j0])
            T.reads(A[i, j])
            T.writes(B[i, j])
            B[i, j] = A[i, j] * 2.0
    for i0, j0 in T.grid(16, 16):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, j0])
            C[i, j] = B[i, j] + 1.0


def test_matmul_is_the_script():
    func = te.create_prim_func(list(_matmul()))
    assert_structural_equal(func, _matmul_script)
    block = func.body.block
    assert block.name_hint == "root" and not block.alloc_buffers
    inner = tir.Schedule(func).get(tir.Schedule(func).get_block("C"))
    assert [str(r.buffer.name) for r in inner.reads] == ["A", "B"]  # C is written, not read
    assert [r.buffer.name for r in inner.writes] == ["C"]
    assert inner.init is not None


def test_chain_allocates_the_intermediate_in_the_root_block():
    func = te.create_prim_func(list(_chain()))
    assert_structural_equal(func, _chain_script)
    assert [b.name for b in func.body.block.alloc_buffers] == ["B"]


def test_a_different_script_is_not_equal():
    k = te.reduce_axis((0, 16), "k")
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    C = te.compute((16, 16), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="C")
    assert not structural_equal(te.create_prim_func([A, B, C]), _matmul_script)


def test_parameters_follow_the_tensors_given():
    A, B, C = _matmul()
    func = te.create_prim_func([C, A, B])
    assert [b.name for b in (func.buffer_of(p) for p in func.params)] == ["C", "A", "B"]
    assert_structural_equal(func, _matmul_script.__class__(
        (_matmul_script.params[2], _matmul_script.params[0], _matmul_script.params[1]),
        _matmul_script.body, _matmul_script.buffer_map, _matmul_script.attrs))


def test_block_names_are_unique():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2, name="main")
    C = te.compute((4,), lambda i: B[i] + 1, name="main")
    s = tir.Schedule(te.create_prim_func([A, C]))
    assert isinstance(s.get_sref(s.get_block("main")), tir.schedule.StmtSRef)
    sref = s.get_sref(s.get_block("main_1"))
    assert sref.stmt.name_hint == "main_1" and isinstance(sref.parent.stmt, tir.For)
    assert sref.parent.parent.stmt.name_hint == "root"
    with pytest.raises(ScheduleError, match="no block named 'main_2'"):
        s.get_block("main_2")


def test_multi_output_reduction_lets_the_combined_values():
    def combine(x, y):
        return (tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1]))

    argmax = te.comm_reducer(combine, lambda t0, t1: (tir.const(-1, t0), te.min_value(t1)),
                             name="argmax")
    idx = te.placeholder((4, 8), name="idx", dtype="int32")
    val = te.placeholder((4, 8), name="val")
    k = te.reduce_axis((0, 8), "k")
    i_out, v_out = te.compute((4,), lambda i: argmax((idx[i, k], val[i, k]), axis=k),
                              name="argmax")
    func = te.create_prim_func([idx, val, i_out, v_out])
    block = tir.Schedule(func).get_block("argmax").block
    assert [r.buffer.name for r in block.reads] == ["val", "idx"]
    assert isinstance(block.body, tir.LetStmt)
    idx_np = np.tile(np.arange(8, dtype="int32"), (4, 1))
    val_np = np.random.default_rng(0).random((4, 8), dtype="float32")
    outs = [microruntime.nd.array(np.zeros(4, "int32")),
            microruntime.nd.array(np.zeros(4, "float32"))]
    compiler.build(func, target="llvm")(microruntime.nd.array(idx_np),
                                        microruntime.nd.array(val_np), *outs)
    np.testing.assert_array_equal(outs[0].numpy(), val_np.argmax(axis=1))
    np.testing.assert_allclose(outs[1].numpy(), val_np.max(axis=1))


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_matmul_runs(target):
    A, B, C = _matmul()
    f = compiler.build(te.create_prim_func([A, B, C]), target=target)
    rng = np.random.default_rng(1)
    a, b = rng.random((16, 16), dtype="float32"), rng.random((16, 16), dtype="float32")
    c = microruntime.nd.array(np.full((16, 16), 7, "float32"))  # init must overwrite this
    f(microruntime.nd.array(a), microruntime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b.T, rtol=1e-5)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_chain_and_zero_dim_run(target):
    A, C = _chain()
    f = compiler.build(te.create_prim_func([A, C]), target=target)
    a = np.random.default_rng(2).random((16, 16), dtype="float32")
    c = microruntime.nd.array(np.zeros((16, 16), "float32"))
    f(microruntime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1)

    x = te.placeholder((), name="x", dtype="int32")
    y = te.placeholder((), name="y", dtype="int32")
    z = te.compute((), lambda: x() + y(), name="z")
    func = te.create_prim_func([x, y, z])
    assert func.body.block.name_hint == "root"
    assert func.body.block.body.block.iter_vars[0].var.name == "vi"
    out = microruntime.nd.array(np.zeros((), "int32"))
    compiler.build(func, target=target)(microruntime.nd.array(np.array(3, "int32")),
                                        microruntime.nd.array(np.array(4, "int32")), out)
    assert int(out.numpy()) == 7


def test_data_dependent_index_runs():
    A = te.placeholder((10,), name="A")
    B = te.placeholder((10,), name="B", dtype="int32")
    C = te.compute((10,), lambda i: A[B[i]], name="C")
    f = compiler.build(te.create_prim_func([C, A, B]), target="llvm")
    a = np.random.default_rng(3).random(10, dtype="float32")
    b = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], "int32")
    c = microruntime.nd.array(np.zeros(10, "float32"))
    f(c, microruntime.nd.array(a), microruntime.nd.array(b))
    np.testing.assert_allclose(c.numpy(), a[b])


def test_int64_override_and_int64_shapes():
    func = te.create_prim_func(list(_matmul()), index_dtype_override="int64")
    loop = func.body.block.body
    assert str(loop.loop_var.dtype) == "int64" and str(loop.extent.dtype) == "int64"
    assert all(str(s.dtype) == "int64" for s in func.buffer_of(func.params[0]).shape)
    n = te.var("n", "int64")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: A[i] + 1, name="B")
    loop = te.create_prim_func([A, B]).body.block.body
    assert str(loop.loop_var.dtype) == "int64" and str(loop.min.dtype) == "int64"


def test_layout_free_placeholders_become_a_function_attr():
    A, B, C = _matmul()
    D = te.compute(C.shape, lambda x, y: C[x, y], name="D",
                   attrs={"layout_free_placeholders": [B, C]})
    func = te.create_prim_func([A, B, D])
    assert list(func.attrs["layout_free_buffers"]) == [1]
    block = tir.Schedule(func).get_block("D").block
    assert [b.name for b in block.annotations["layout_free_placeholders"]] == ["C"]


def test_script_round_trip():
    for func in (te.create_prim_func(list(_matmul())), te.create_prim_func(list(_chain()))):
        text = func.script()
        assert "T.block(" in text and "T.reads(" in text
        assert_structural_equal(from_source(text), func)


def test_extern_block_reads_and_writes_whole_buffers():
    A = te.placeholder((8,), name="A")
    B = te.extern((8,), [A], lambda ins, outs: tir.call_packed("my.func", ins[0], outs[0]),
                  name="B")
    func = te.create_prim_func([A, B])
    block = func.body.block
    assert block.name_hint == "B" and not block.iter_vars
    assert [(r.buffer.name, int(r.region[0].extent)) for r in block.reads] == [("A", 8)]
    assert [(r.buffer.name, int(r.region[0].extent)) for r in block.writes] == [("B", 8)]


def test_scan_is_not_supported():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    state = te.placeholder((m, n))
    init = te.compute((1, n), lambda _, i: X[0, i])
    update = te.compute((m, n), lambda t, i: state[t - 1, i] + X[t, i])
    scan = te.scan(init, update, state, inputs=[X])
    with pytest.raises(TypeError, match="Unsupported Operation: ScanOp."):
        te.create_prim_func([X, scan])
