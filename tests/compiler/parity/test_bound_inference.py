"""`te.schedule.InferBound(s)`: the Range of every axis of every stage, with the extents
classic TVM infers for the same schedules (split by a factor larger than the axis, splits whose
factor divides the extent, fuse then split, compute_at under thread-bound loops, warp memory,
scans, groups, rfactor), and the allocations lowering makes from them. (A compute whose body
calls a tensor intrinsic on a slice has no counterpart: te.compute takes expressions only.)"""
import numpy as np

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.arith import Analyzer, simplify
from compiler.tir.functor import IRVisitor, substitute
from microruntime import Map


def _value(e) -> int:
    e = simplify(e)
    assert isinstance(e, tir.IntImm), f"{e} is not a constant"
    return e.value


def _equal(a, b) -> bool:
    return Analyzer().can_prove_equal(a, b)


def _allocations(mod) -> dict:
    """name -> number of elements of every Allocate in the lowered module."""
    found = {}

    class V(IRVisitor):
        def visit_Allocate(self, node):
            found[node.buffer.name] = int(np.prod([_value(s) for s in node.buffer.shape]))
            self.generic_visit(node)

    for f in mod.functions.values():
        V().visit(f.body)
    return found


def _pair(name="A"):
    m, l = te.var("m"), te.var("l")
    A = te.placeholder((m, l), name=name)
    A1 = te.compute((m, l), lambda i, j: A[i, j], name="A1")
    A2 = te.compute((m, l), lambda i, j: A1[i, j] + 3, name="A2")
    return m, l, A, A1, A2


def test_compute_at_outer_part_of_a_split():
    m, l, A, A1, A2 = _pair()
    s = te.create_schedule([A2.op])
    xo, xi = s[A2].split(s[A2].op.axis[0], 8)
    s[A1].compute_at(s[A2], xo)
    bounds = te.schedule.InferBound(s)
    assert isinstance(bounds, Map)   # TVM's container, keyed by the IterVars themselves
    assert _value(bounds[A1.op.axis[0]].extent) == 8


def test_compute_at_tile_and_normalize_leaves_the_schedule():
    m, l, A, A1, A2 = _pair()
    s = te.create_schedule(A2.op)
    xo, yo, xi, yi = s[A2].tile(A2.op.axis[0], A2.op.axis[1], 8, 8)
    s.normalize()  # a copy: the schedule itself is unchanged
    s[A1].compute_at(s[A2], yo)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A1.op.axis[0]].extent) == 8
    assert _value(bounds[A1.op.axis[1]].extent) == 8


def test_shared_stage_under_a_thread_loop_covers_the_block():
    m, l, A, A1, A2 = _pair()
    s = te.create_schedule(A2.op)
    s[A1].set_scope("shared")
    xo, xi = s[A2].split(A2.op.axis[0], 32)
    xi0, xi1 = s[A2].split(xi, nparts=16)
    s[A2].bind(xi0, te.thread_axis("threadIdx.x"))
    yo, yi = s[A2].split(A2.op.axis[1], 16)
    s.normalize()
    s[A2].reorder(xo, xi0, yo, xi1, yi)
    s[A1].compute_at(s[A2], yo)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A1.op.axis[0]].extent) == 32
    assert _value(bounds[A1.op.axis[1]].extent) == 16


def _split8(**split):
    I = te.placeholder((8,), name="I")
    EF = te.compute((8,), lambda i: I[i] * 2, name="EF")
    E = te.compute((8,), lambda i: EF[i] * 2, name="E")
    s = te.create_schedule([E.op])
    xo, xi = s[E].split(s[E].op.axis[0], **split)
    s[EF].compute_at(s[E], xo)
    return s, I, EF, E, xo, xi


def test_split_factor_larger_than_the_extent():
    s, I, EF, E, xo, xi = _split8(factor=32)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[xi].extent) == 8
    assert _value(bounds[xo].extent) == 1
    assert _value(bounds[EF.op.axis[0]].extent) == 8
    assert _allocations(lower(s, [I, E]))["EF"] == 8


def test_split_nparts_larger_than_the_extent():
    s, I, EF, E, xo, xi = _split8(nparts=32)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[xo].extent) == 8
    assert _value(bounds[xi].extent) == 1
    assert _value(bounds[EF.op.axis[0]].extent) == 1
    assert _allocations(lower(s, [I, E]))["EF"] == 1


def test_split_by_a_factor_that_divides_the_extent():
    m, l = te.var("m"), te.var("l")
    A = te.placeholder((8 * m, l), name="A")
    B = te.compute((8 * m, l), lambda i, j: A[i, j], name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], 8)
    bounds = te.schedule.InferBound(s)
    assert bounds[xo].extent is m
    assert _value(bounds[xi].extent) == 8


def test_tile_by_factors_that_divide_the_extents():
    m, l = te.var("m"), te.var("l")
    shape = (8 * m, 32 * l)
    A = te.placeholder(shape, name="A")
    B = te.compute(shape, lambda i, j: A[i, j], name="B")
    s = te.create_schedule(B.op)
    xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], 8, 32)
    bounds = te.schedule.InferBound(s)
    assert bounds[xo].extent is m
    assert _value(bounds[xi].extent) == 8
    assert bounds[yo].extent is l
    assert _value(bounds[yi].extent) == 32


def test_fuse_then_split_by_a_symbolic_factor():
    m, l, A, A1, A2 = _pair()
    split1 = te.var("s")
    s = te.create_schedule(A2.op)
    fused = s[A2].fuse(A2.op.axis[0], A2.op.axis[1])
    xo, xi = s[A2].split(fused, split1)
    s[A1].compute_at(s[A2], xo)
    bounds = te.schedule.InferBound(s)
    assert _equal(bounds[A1.op.axis[0]].min, tir.indexdiv(xo.var * split1, l))
    expected = tir.indexdiv((xo.var + 1) * split1 - 1, l) - tir.indexdiv(xo.var * split1, l) + 1
    for i in range(1, 6):
        for j in range(1, 6):
            for k in range(1, 6):
                vmap = {split1: tir.const(i), l: tir.const(j), xo.var: tir.const(k)}
                got = substitute(bounds[A1.op.axis[0]].extent, vmap)
                assert _value(got) == _value(substitute(expected, vmap)), (i, j, k)
    assert _equal(bounds[A1.op.axis[1]].extent, l)


def test_fuse_then_split_by_a_constant_factor():
    m = te.var("m")
    A = te.placeholder((m, 6), name="A")
    A1 = te.compute((m, 6), lambda i, j: A[i, j], name="A1")
    A2 = te.compute((m, 6), lambda i, j: A1[i, j] + 3, name="A2")
    s = te.create_schedule(A2.op)
    fused = s[A2].fuse(A2.op.axis[0], A2.op.axis[1])
    xo, xi = s[A2].split(fused, 3)
    s[A1].compute_at(s[A2], xo)
    bounds = te.schedule.InferBound(s)
    at5 = {xo.var: tir.const(5)}
    assert _value(substitute(bounds[A1.op.axis[0]].min, at5)) == 2
    assert _value(substitute(bounds[A1.op.axis[1]].min, at5)) == 3
    # the factor divides the row: each outer iteration covers part of one row
    assert _value(bounds[A1.op.axis[0]].extent) == 1
    assert _value(bounds[A1.op.axis[1]].extent) == 3
    assert _allocations(lower(s, [A, A2]))["A1"] == 3


def test_fuse_then_split_by_a_factor_of_the_inner_extent():
    """(i*n + j) split by a factor dividing n: a tile of one row, `factor` wide."""
    n, m = 32, 16
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    fused = s[C].fuse(*C.op.axis)
    xo, xi = s[C].split(fused, 8)
    s[B].compute_at(s[C], xo)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[B.op.axis[0]].extent) == 1
    assert _value(bounds[B.op.axis[1]].extent) == 8
    assert _allocations(lower(s, [A, C]))["B"] == 8


def test_warp_memory_covers_the_warp():
    m, l, A, A1, A2 = _pair()
    s = te.create_schedule(A2.op)
    s[A1].set_scope("warp")
    xo, xi = s[A2].split(A2.op.axis[0], 32)
    xi0, xi1 = s[A2].split(xi, factor=16)
    tx = te.thread_axis("threadIdx.x")
    s[A2].bind(xi1, tx)
    s[A2].bind(xi0, te.thread_axis("threadIdx.y"))
    y = s[A2].op.axis[1]
    s[A1].compute_at(s[A2], y)
    xo, xi = s[A1].split(s[A1].op.axis[0], factor=16)
    s[A1].bind(xi, tx)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A1.op.axis[0]].extent) == 16


def test_cache_read_in_a_scan_update():
    m, n = te.var("m"), te.var("n")
    X = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state)
    assert tuple(s_scan.shape) == (m, n)
    s = te.create_schedule(s_scan.op)
    XX = s.cache_read(X, "local", s_update)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=4)
    s[XX].compute_at(s[s_update], xo)
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[XX.op.axis[1]].extent) == 4


def test_conv1d_window():
    n = te.var("n")
    A = te.compute((n + 2), lambda i: 1, name="A")

    def compute_b(ii):
        i = ii + 1
        return A[i - 1] + A[i] + A[i + 1]

    B = te.compute(n, compute_b, name="B")
    s = te.create_schedule(B.op)
    s[A].compute_at(s[B], B.op.axis[0])
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A.op.axis[0]].extent) == 3


def test_blur_window():
    n = tir.const(12)
    A = te.compute((n, n), lambda i, j: 1, name="A")

    def compute_b(ii, jj):
        i, j = ii + 1, jj + 1
        return A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j + 1] + A[i][j - 1]

    B = te.compute((n - 2, n - 2), compute_b, name="B")
    s = te.create_schedule(B.op)
    s[A].compute_at(s[B], B.op.axis[1])
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A.op.axis[0]].extent) == 3
    assert _value(bounds[A.op.axis[1]].extent) == 3


def test_rfactor_stage():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n))
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=(i > 1)), name="B")
    s = te.create_schedule(B.op)
    kf, ki = s[B].split(k, nparts=4)
    BF = s.rfactor(B, kf)
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[BF.op.axis[0]].extent) == 4
    assert _value(bounds[BF.op.axis[1]].extent) == 1


def _chain():
    m, n = te.var("m"), te.var("n")
    x = te.compute((m, n), lambda i, j: tir.const(1, "float32"), name="x")
    x1 = te.compute(x.shape, lambda *i: x(*i) + 1, name="x1")
    x2 = te.compute(x.shape, lambda *i: x1(*i) + 2, name="x2")
    return n, x, x1, x2


def test_group_computed_at_a_row():
    n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    g.compute_at(s[x2], x2.op.axis[0])
    assert s[x1].group is g and s[x].group is g
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[x.op.axis[0]].extent) == 1
    assert bounds[x.op.axis[1]].extent is n


def test_nested_groups():
    n, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g1 = s.create_group(outputs=x, inputs=x, include_inputs=True)
    g2 = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s[x].group is g1 and s[x1].group is g2
    g2.compute_at(s[x2], x2.op.axis[0])
    g1.compute_at(s[x1], s[x1].op.axis[1])
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[x.op.axis[0]].extent) == 1
    assert _value(bounds[x.op.axis[1]].extent) == 1
    assert _value(bounds[x1.op.axis[0]].extent) == 1
    assert bounds[x1.op.axis[1]].extent is n


def test_nested_thread_binds():
    m = te.var("m")
    A = te.placeholder((m), name="A")
    A1 = te.compute((m,), lambda i: A[i], name="A1")
    A2 = te.compute((m,), lambda i: A1[i] + 2, name="A2")
    A3 = te.compute((m,), lambda i: A2[i] + 3, name="A3")
    s = te.create_schedule(A3.op)
    s[A2].set_scope("shared")
    s[A1].set_scope("local")
    block_x, thread_x = te.thread_axis("blockIdx.x"), te.thread_axis("threadIdx.x")
    bx, tx = s[A3].split(A3.op.axis[0], factor=32)
    s[A3].bind(bx, block_x)
    s[A3].bind(tx, thread_x)
    s[A2].compute_at(s[A3], tx)
    _, xi = s[A2].split(A2.op.axis[0], nparts=1)
    s[A2].bind(xi, thread_x)
    s[A1].compute_at(s[A3], tx)
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A1.op.axis[0]].extent) == 1
    assert _value(bounds[A2.op.axis[0]].extent) == 32
    assert bounds[A3.op.axis[0]].extent is m
    # the thread axes have the extents of the loops bound to them
    assert _value(bounds[thread_x].extent) == 32


def _gemm():
    n = 1024
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda ii, jj: te.sum(A[ii, k] * B[jj, k], axis=k), name="CC")
    s = te.create_schedule(C.op)
    scale, num_thread = 8, 8
    block_factor = scale * num_thread
    block_x, thread_x = te.thread_axis("blockIdx.x"), te.thread_axis("threadIdx.x")
    block_y, thread_y = te.thread_axis("blockIdx.y"), te.thread_axis("threadIdx.y")
    CC = s.cache_write(C, "local")
    AA = s.cache_read(A, "shared", [CC])
    BB = s.cache_read(B, "shared", [CC])
    by, yi = s[C].split(C.op.axis[0], factor=block_factor)
    bx, xi = s[C].split(C.op.axis[1], factor=block_factor)
    s[C].reorder(by, bx, yi, xi)
    s[C].bind(by, block_y)
    s[C].bind(bx, block_x)
    ty, yi = s[C].split(yi, nparts=num_thread)
    tx, xi = s[C].split(xi, nparts=num_thread)
    s[C].reorder(ty, tx, yi, xi)
    s[C].bind(ty, thread_y)
    s[C].bind(tx, thread_x)
    yo, xo = CC.op.axis
    s[CC].reorder(k, yo, xo)
    s[CC].compute_at(s[C], tx)
    s[AA].compute_at(s[CC], k)
    s[BB].compute_at(s[CC], k)
    for T in (AA, BB):
        ty, xi = s[T].split(s[T].op.axis[0], nparts=num_thread)
        tx, xi = s[T].split(xi, nparts=num_thread)
        s[T].bind(ty, thread_y)
        s[T].bind(tx, thread_x)
    return s, A, B, C, CC, AA, BB


def test_gemm_with_shared_and_local_caches():
    s, A, B, C, CC, AA, BB = _gemm()
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[BB.op.axis[0]].extent) == 64
    assert _value(bounds[AA.op.axis[0]].extent) == 64
    assert _value(bounds[CC.op.axis[0]].extent) == 8
    assert _value(bounds[CC.op.axis[1]].extent) == 8


def test_gemm_allocations():
    s, A, B, C, CC, AA, BB = _gemm()
    allocs = _allocations(lower(s, [A, B, C]))
    assert allocs["A.shared"] == 64 and allocs["B.shared"] == 64
    assert allocs["CC.local"] == 64


def _check_at_most_two(B, A):
    s = te.create_schedule(B.op)
    s = s.normalize()
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[A.op.axis[0]].extent) <= 2, lower(s, [B, A])


def test_bounds_are_not_widened_by_hard_expressions():
    A = te.compute((2,), lambda j: j, "A")
    tdiv = tir.truncdiv
    _check_at_most_two(te.compute((10,), lambda i: A[te.min(3 * i, 4 * i)
                                                     + te.min(-3 * i, -2 * i)]), A)
    _check_at_most_two(te.compute((10,), lambda i: A[te.min(3 * i, 4 * i)
                                                     + te.max(-3 * i, -4 * i)]), A)
    _check_at_most_two(te.compute((10,), lambda i: A[-2 * tdiv(i, 2) - te.min(i, 0 - i)]), A)
    _check_at_most_two(te.compute((10,), lambda i: A[i + (0 - i)]), A)
    # reads past A's end: the region is still A's own shape
    _check_at_most_two(te.compute((10,), lambda i: A[i]), A)


def test_tight_bounds_run_correctly(target):
    """The fuse-then-split schedule above, built and run: the smaller buffer is enough."""
    n, m = 32, 16
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(s[C].fuse(*C.op.axis), 8)
    s[B].compute_at(s[C], xo)
    f = build(s, [A, C], target=target, name="f")
    a = np.random.default_rng(0).random((n, m), dtype="float32")
    c = runtime.nd.empty((n, m), "float32")
    f["f"](runtime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)


def _cache_of_a_relayout(n, factor):
    """A cache_write of C after a tile, split and fuse (its axes are C's leaves), computed at
    a split of C's row tile: C reads it at `n // 2 % (factor // 2)`."""
    A = te.placeholder((n, n), name="A")
    C = te.compute((n, n), lambda i, j: A[i, j] * 3.0, name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    _, _, ii, ji = s[C].tile(i, j, factor, factor)
    _, iii = s[C].split(ii, 2)
    s[C].fuse(iii, ji)
    CS = s.cache_write(C, "global")
    i, j = s[C].op.axis
    _, _, ii, _ = s[C].tile(i, j, factor, factor)
    iio, _ = s[C].split(ii, 8)
    s[CS].compute_at(s[C], iio)
    return s, A, C, CS


def test_cache_read_through_a_mod_of_tiled_rows():
    """Inside C's loop over 8-row blocks of a 32-row tile, the cache's row axis (`row // 2`
    within the tile) covers 4 rows, not the tile's 16: the tile's multiple drops out of the
    remainder once the outer loops' ranges are known."""
    s, _, _, CS = _cache_of_a_relayout(64, 32)
    bounds = te.schedule.InferBound(s)
    extents = [bounds[iv].extent for iv in CS.op.axis]
    assert [int(e) for e in extents] == [1, 1, 4, 64]


def test_cache_read_through_a_mod_of_tiled_rows_runs(target):
    s, A, C, _ = _cache_of_a_relayout(64, 32)
    f = build(s, [A, C], target=target, name="f")
    a = np.random.default_rng(1).random((64, 64), dtype="float32")
    c = runtime.nd.empty((64, 64), "float32")
    f["f"](runtime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 3, rtol=1e-6)
