"""topi.x86.gemm_packed (packed panels, k/m/n blocking, A packed or read in place) and the
register tile it shares with dense / matmul / batch_matmul (tile_gemm), against numpy
(float32, rtol 1e-4, atol 1e-4), on "c" and "llvm": sizes that do not divide the tile (odd
M/N/K, M < mr, N % nr, K % kc, blocks that do not divide the tile grid), B as [K, N], [N, K]
and packed at compile time, a fused bias + relu epilogue, k blocks summed in the output; no
bounds check inside the k loop of a full tile; the tile of each ISA."""
import numpy as np
import pytest

import compiler
from compiler import te, topi
from compiler.target import Target
from compiler.tir.expr import IntImm
from compiler.tir.functor import IRVisitor, post_order_visit
from compiler.tir.stmt import For, ForKind, IfThenElse
from compiler.topi.nn.dense import add_bias

TOL = dict(rtol=1e-4, atol=1e-4)


def _gemm(m, n, k, *, transpose_b=False, packed=False, bias=False, kc=256, mc=96, nc=256,
          pack_a=True, b_in_block=False, rng=None):
    """(schedule, tensors, arrays, reference) of a packed GEMM case."""
    a = rng.standard_normal((m, k)).astype("float32")
    w = rng.standard_normal((n, k) if transpose_b else (k, n)).astype("float32")
    ref = a @ (w.T if transpose_b else w)
    A = te.placeholder((m, k), name="A")
    with Target("llvm"):
        if packed:
            _, nr = topi.x86.register_tile()
            wp = topi.x86.pack_b_numpy(w, nr, kc, transpose_b=transpose_b)
            B = te.placeholder(wp.shape, name="B")
            C = topi.x86.gemm_packed(A, B, b_packed=True, n=n, kc=kc, pack_a=pack_a)
            w = wp
        else:
            B = te.placeholder(w.shape, name="B")
            C = topi.x86.gemm_packed(A, B, transpose_b=transpose_b, kc=kc, pack_a=pack_a)
        tensors, arrays = [A, B], [a, w]
        if bias:
            b = rng.standard_normal(n).astype("float32")
            bt = te.placeholder((n,), name="bias")
            C = topi.nn.relu(add_bias(C, bt))
            tensors, arrays, ref = tensors + [bt], arrays + [b], np.maximum(ref + b, 0)
        s = topi.x86.schedule_gemm_packed(C, mc=mc, nc=nc, pack_b_in_block=b_in_block)
    return s, tensors, C, arrays, ref


@pytest.mark.parametrize("m,n,k,kc,mc,nc,pack_a,b_in_block", [
    (13, 20, 7, 256, 96, 256, True, False),     # one k block, M and N tails
    (13, 20, 7, 256, 96, 256, False, True),     # ... A in place (rows past M clamped), B
                                                # packed per column block
    (1, 33, 17, 256, 96, 256, True, False),     # M < mr
    (1, 33, 17, 256, 96, 256, False, False),
    (64, 64, 64, 256, 96, 256, True, False),    # whole tiles
    (31, 45, 130, 40, 96, 256, True, False),    # k blocks (130 = 4 x 33 - 2 padded), N % nr
    (31, 45, 130, 40, 96, 256, False, True),    # ... A's padded columns zero in place
    (37, 70, 300, 64, 12, 32, True, False),     # blocks of 2 x 2 tiles over a 7 x 5 grid
    (37, 70, 300, 64, 12, 32, True, True),      # ... 3 column blocks, B packed in each
    (20, 32, 48, 16, 12, 16, False, False),     # k blocks that divide K (no padding), M % mr
])
def test_gemm_packed_sizes(run, rng, m, n, k, kc, mc, nc, pack_a, b_in_block):
    s, ins, out, arrays, ref = _gemm(m, n, k, kc=kc, mc=mc, nc=nc, pack_a=pack_a,
                                     b_in_block=b_in_block, rng=rng)
    (got,) = run(s, ins, [out], arrays)
    np.testing.assert_allclose(got, ref, **TOL)


@pytest.mark.parametrize("transpose_b,packed,kc,pack_a,b_in_block", [
    (True, False, 32, True, False), (False, True, 32, True, False),
    (True, True, 32, False, False),
    (False, False, 256, True, False),   # one k block: the epilogue reads the accumulator
    (False, False, 35, False, False),   # k blocks that divide K = 70
    (True, False, 32, True, True),      # B [N, K] packed per column block, k blocks
    (False, False, 256, False, True),   # B [K, N] packed per column block, one k block
])
def test_gemm_packed_b_layouts_bias_relu(run, rng, transpose_b, packed, kc, pack_a,
                                         b_in_block):
    s, ins, out, arrays, ref = _gemm(29, 37, 70, transpose_b=transpose_b, packed=packed,
                                     bias=True, kc=kc, pack_a=pack_a, b_in_block=b_in_block,
                                     rng=rng)
    (got,) = run(s, ins, [out], arrays)
    np.testing.assert_allclose(got, ref, **TOL)


def _stages(s):
    return {st.op.name for st in s.stages if st.attach_type != "inline"}


def test_gemm_packed_epilogue_fused_and_stages(rng):
    # k blocks: the block's sum (T_gemm) in a buffer of its own, bias + relu fused into the
    # copy out of it
    s, _, _, _, _ = _gemm(13, 20, 70, bias=True, kc=32, rng=rng)
    assert {"T_gemm_pack_a", "T_gemm_pack_b", "T_gemm_acc", "T_gemm"} <= _stages(s)
    assert "T_add_bias" not in _stages(s)
    # one k block: the copy out of the padded tiles is inlined into the relu too
    s, _, _, _, _ = _gemm(13, 20, 70, bias=True, kc=256, rng=rng)
    assert {"T_gemm_pack_a", "T_gemm_pack_b", "T_gemm_acc"} <= _stages(s)
    assert not {"T_add_bias", "T_gemm"} & _stages(s)
    # A read in place (rows past M clamped): no packing stage for it
    s, _, _, _, _ = _gemm(13, 20, 70, kc=32, pack_a=False, rng=rng)
    assert "T_gemm_pack_a" not in _stages(s) and "T_gemm_pack_b" in _stages(s)
    # B packed per column block: its stage is attached inside the parallel block loop
    s, _, _, _, _ = _gemm(13, 40, 70, kc=32, nc=16, b_in_block=True, rng=rng)
    attach = {st.op.name: st.attach_type for st in s.stages}
    assert attach["T_gemm_pack_b"] == "scope" and attach["T_gemm_pack_a"] == "root"


def test_gemm_packed_k_blocks_sum_in_output(rng):
    # without an epilogue the k blocks are summed in the output itself: no buffer of the
    # block's sum, no copy
    s, ins, out, _, _ = _gemm(37, 45, 300, kc=64, mc=12, nc=32, rng=rng)
    func = compiler.lower(s, ins + [out], name="f")["f"]
    allocs = []

    class _Allocs(IRVisitor):
        def visit_Allocate(self, st):
            allocs.append(st.buffer.name)
            self.generic_visit(st)

    _Allocs().visit(func.body)
    assert not any(a.startswith("T_gemm_sum") or a == "T_gemm" for a in allocs), allocs


def _is_k(name: str) -> bool:
    """The accumulator's reduction loop: "k", "k_1", ... (not the packing loops "kk*")."""
    return name == "k" or (name.startswith("k_") and name[2:].isdigit())


class _GuardsInK(IRVisitor):
    """Counts IfThenElse statements inside reduction loops outside loop_partition tails."""

    def __init__(self):
        super().__init__()
        self.stack, self.guards, self.k_loops = [], 0, 0

    def visit_For(self, loop: For):
        self.stack.append(loop.loop_var.name)
        if _is_k(loop.loop_var.name) and not any("tail" in v for v in self.stack):
            self.k_loops += 1
        self.generic_visit(loop)
        self.stack.pop()

    def visit_IfThenElse(self, st: IfThenElse):
        if any(_is_k(v) for v in self.stack) and \
                not any("tail" in v for v in self.stack):
            self.guards += 1
        self.generic_visit(st)


@pytest.mark.parametrize("m,n,k,kc", [(13, 20, 7, 256), (37, 45, 300, 64)])
def test_no_bounds_check_in_k_loop(rng, m, n, k, kc):
    s, ins, out, _, _ = _gemm(m, n, k, kc=kc, mc=12, nc=32, rng=rng)
    func = compiler.lower(s, ins + [out], name="f")["f"]
    v = _GuardsInK()
    v.visit(func.body)
    assert v.k_loops > 0
    assert v.guards == 0


@pytest.mark.parametrize("target,tile", [
    ("llvm -mcpu=znver3", (6, 16)),
    ("llvm -mcpu=skylake-avx512", (8, 32)),
    ("llvm -mtriple=aarch64-linux-gnu", (8, 8)),
    ("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64", (6, 8)),
])
def test_register_tile_from_isa(target, tile):
    assert topi.x86.register_tile(target) == tile


def test_pack_b_numpy_layout(rng):
    w = rng.standard_normal((5, 19)).astype("float32")     # [K, N]
    p = topi.x86.pack_b_numpy(w, 8, kc=4)                  # 5 -> 2 blocks of 3
    assert p.shape == (3, 6, 8)
    np.testing.assert_array_equal(p[1, 2, :], w[2, 8:16])
    np.testing.assert_array_equal(p[2, :5, :3], w[:, 16:19])
    assert not p[2, :, 3:].any() and not p[:, 5, :].any()


# ---- the register tile on the computes as written (tile_gemm) -------------------------------
@pytest.mark.parametrize("m,n,k", [(7, 37, 19), (1, 5, 3), (6, 16, 8), (40, 300, 33)])
def test_dense_bias_relu_static(run, rng, m, n, k):
    x, w, b = (te.placeholder(s, name=nm) for s, nm in (((m, k), "x"), ((n, k), "w"),
                                                         ((n,), "b")))
    xa, wa, ba = (rng.standard_normal(s).astype("float32") for s in ((m, k), (n, k), (n,)))
    y = topi.nn.relu(topi.nn.dense(x, w, b))
    (got,) = run(topi.x86.schedule_dense([y]), [x, w, b], [y], [xa, wa, ba])
    np.testing.assert_allclose(got, np.maximum(xa @ wa.T + ba, 0), **TOL)


@pytest.mark.parametrize("m,n,k", [(13, 21, 17), (2, 7, 5), (96, 260, 24)])
def test_matmul_static(run, rng, m, n, k):
    A, B = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
    a, b = rng.standard_normal((m, k)).astype("float32"), \
        rng.standard_normal((k, n)).astype("float32")
    C = topi.nn.matmul(A, B)
    (got,) = run(topi.x86.schedule_matmul([C]), [A, B], [C], [a, b])
    np.testing.assert_allclose(got, a @ b, **TOL)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_batch_matmul_static(run, rng, transpose_b):
    bsz, m, n, k = 3, 13, 20, 9
    bshape = (bsz, n, k) if transpose_b else (bsz, k, n)
    A, B = te.placeholder((bsz, m, k), name="A"), te.placeholder(bshape, name="B")
    a, b = rng.standard_normal((bsz, m, k)).astype("float32"), \
        rng.standard_normal(bshape).astype("float32")
    C = topi.nn.batch_matmul(A, B, transpose_b=transpose_b)
    (got,) = run(topi.x86.schedule_batch_matmul([C]), [A, B], [C], [a, b])
    ref = a @ (b.transpose(0, 2, 1) if transpose_b else b)
    np.testing.assert_allclose(got, ref, **TOL)


def test_packed_gemm_of_one_block_is_split_for_the_threads(run, rng):
    """32 x 512 x 128 fits one mc x nc block; its columns are cut into GEMM_MIN_BLOCKS
    parallel blocks (in one block it ran on one thread, and two threads were slower than one:
    only the packing was parallel)."""
    s, ins, out, arrays, ref = _gemm(32, 128, 512, rng=rng)
    loops = []
    post_order_visit(compiler.lower(s, ins + [out], name="f")["f"].body, lambda n: loops.append(
        (n.loop_var.name, n.extent.value)) if isinstance(n, For) and n.kind == ForKind.PARALLEL
        and isinstance(n.extent, IntImm) else None)
    assert any(not name.startswith(("io", "kk", "jo")) and extent >= 4 for name, extent in loops)
    (got,) = run(s, ins, [out], arrays)
    np.testing.assert_allclose(got, ref, **TOL)


@pytest.mark.parametrize("n,nr,lanes,want", [(49, 32, 16, 16), (80, 32, 16, 16),
                                             (197, 32, 16, 32), (96, 32, 16, 32),
                                             (40, 32, 16, 32), (20, 32, 16, 16)])
def test_tile_width_leaves_less_than_a_vector_over(n, nr, lanes, want):
    """Columns past the last whole tile run scalar: N = 49 in tiles of 32 would leave 17 (a
    Swin window's attention ran at 17 GFLOP/s), in tiles of 16 one."""
    assert topi.x86.gemm._fit_cols(n, nr, lanes) == want


def test_batch_matmul_of_window_attention(run, rng):
    A, B = te.placeholder((6, 49, 32), name="A"), te.placeholder((6, 32, 49), name="B")
    a, b = rng.standard_normal((6, 49, 32)).astype("float32"), \
        rng.standard_normal((6, 32, 49)).astype("float32")
    C = topi.nn.batch_matmul(A, B, transpose_b=False)
    (got,) = run(topi.x86.schedule_batch_matmul([C]), [A, B], [C], [a, b])
    np.testing.assert_allclose(got, a @ b, **TOL)


def test_small_gemms_still_get_several_parallel_blocks():
    from compiler.topi.x86.gemm import GEMM_MIN_BLOCKS, parallel_block

    # a transformer's 64 x 128 x 128: one 96 x 256 block would leave a second thread idle
    ncb = parallel_block(64, 128, 128, 1, 96, 256, 16)
    assert ncb % 16 == 0 and -(-128 // ncb) >= GEMM_MIN_BLOCKS
    assert parallel_block(8, 16, 8, 1, 96, 256, 16) == 256          # too little work
    assert parallel_block(512, 512, 512, 1, 96, 256, 16) == 256      # enough blocks already
    assert parallel_block(64, 16, 4096, 1, 96, 256, 16) == 16        # one tile wide at most


@pytest.mark.parametrize("n,nr,want", [(384, 32, 192), (192, 32, 96), (320, 32, 160),
                                       (448, 32, 224), (768, 32, 128), (384, 16, 192),
                                       (1000, 32, 256), (100, 32, 64)])
def test_parallel_block_divides_n(n, nr, want):
    """A column block that does not divide N would leave a guard in every tile (N = 384 in
    blocks of 256 ran 30x slower); whole-tile widths get the widest dividing block (after
    halving for parallel blocks: 196 x 192 has too few blocks of 256 columns; 196 x 768 in
    3 x 3 blocks of 256 an odd count, in 3 x 6 of 128 an even one)."""
    assert topi.x86.gemm.parallel_block(196, n, 1536, 1, 96, 256, nr) == want


def test_few_parallel_blocks_are_an_even_number():
    """Below GEMM_EVEN_BLOCKS an odd count of blocks gets narrower columns until it is even
    (two threads share it evenly); above, or one tile wide, it stays."""
    from compiler.topi.x86.gemm import GEMM_EVEN_BLOCKS, parallel_block
    assert parallel_block(197, 768, 3072, 1, 72, 256, 32) == 128       # 3 x 3 -> 3 x 6
    assert parallel_block(197, 2304, 768, 1, 72, 256, 32) == 128       # 3 x 9 -> 3 x 18
    assert parallel_block(197, 3072, 768, 1, 72, 256, 32) == 256       # 3 x 12: even
    m = 72 * (GEMM_EVEN_BLOCKS + 1)                                    # 33 x 1: enough
    assert parallel_block(m, 256, 768, 1, 72, 256, 32) == 256
    assert parallel_block(197, 32, 3072, 1, 72, 256, 32) == 32         # one tile: 3 stay


class _Guards(IRVisitor):
    count = 0

    def visit_IfThenElse(self, st: IfThenElse):
        _Guards.count += 1
        self.generic_visit(st)


def test_matmul_with_n_off_the_power_of_two_path_has_no_guards(run, rng):
    m, k, n = 64, 24, 384
    A, B = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
    C = topi.nn.matmul(A, B)
    s = topi.x86.schedule_matmul([C])
    _Guards.count = 0
    _Guards().visit(compiler.lower(s, [A, B, C], name="f")["f"].body)
    assert _Guards.count == 0
    a, b = rng.standard_normal((m, k)).astype("float32"), \
        rng.standard_normal((k, n)).astype("float32")
    (got,) = run(topi.x86.schedule_matmul([C]), [A, B], [C], [a, b])
    np.testing.assert_allclose(got, a @ b, **TOL)


@pytest.mark.parametrize("lead", [(37, 1), (3, 5, 1)])
def test_matmul_one_row_per_batch_tiles_the_batch_as_rows(rng, lead):
    """[L, 1, K] @ [K, N] (+ bias), as relax.matmul lowers it: the leading axes are the tile's
    rows (one 2-D GEMM, not L GEMVs: 89 GFLOP/s instead of 31 on ViT's [197, 1, 768] @
    [768, 2304]); the result is the same."""
    import microruntime
    from compiler import relay
    from compiler.relax import BlockBuilder, op
    from compiler.relax.expr import Var
    from compiler.relax.struct_info import TensorStructInfo
    from microruntime import graph_executor

    k, n = 19, 40
    x = Var("x", TensorStructInfo((*lead, k), "float32"))
    w = Var("w", TensorStructInfo((k, n), "float32"))
    bb = BlockBuilder()
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        out = bb.emit_output(op.matmul(x, w))
    bb.emit_func_output(out, [x, w])
    a, b = rng.standard_normal((*lead, k)).astype("float32"), \
        rng.standard_normal((k, n)).astype("float32")
    mod, _ = relay.plan(bb.get(), {"w": b})
    kernel = next(f for _, f in mod.items() if isinstance(f, compiler.tir.PrimFunc))
    loops = []

    class Loops(IRVisitor):
        def visit_For(self, loop):
            loops.append(loop)
            self.generic_visit(loop)

    Loops().visit(kernel.body)
    assert not any(int(getattr(lp.extent, "value", 0)) == lead[0] for lp in loops), \
        "a loop over the batch alone: one row per tile"
    gm = graph_executor.GraphModule(relay.build(bb.get(), target="llvm", params={"w": b})
                                    ["default"](microruntime.cpu()))
    gm.set_input("x", a)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), a @ b, **TOL)


@pytest.mark.parametrize("lead,k,n", [((1, 45), 70, 50), ((45, 1), 33, 64), ((40,), 300, 37),
                                      ((1, 1, 37, 1), 16, 32), ((1, 14, 14), 40, 48),
                                      ((2, 5, 1, 7), 24, 40)])
def test_matmul_packed_reads_a_model_activation_in_place(run, rng, lead, k, n):
    """matmul_packed: A [1, L, K] / [L, 1, K] / [L, K] / [1, H, W, K] (its leading dimensions
    the rows, flattened) by B [K, N], C in A's leading shape, one k block (K up to
    PACKED_MAX_K), a fused bias + relu epilogue."""
    a = rng.standard_normal((*lead, k)).astype("float32")
    w = rng.standard_normal((k, n)).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    with Target("llvm"):
        A, B = te.placeholder(a.shape, name="A"), te.placeholder(w.shape, name="B")
        bt = te.placeholder((n,), name="bias")
        C = topi.x86.matmul_packed(A, B)
        assert C.op.tag == "gemm_packed" and tuple(int(d) for d in C.shape) == (*lead, n)
        D = topi.nn.relu(te.compute(C.shape, lambda *i: C(*i) + bt[i[-1]], name="add",
                                    tag="elemwise"))
        s = topi.x86.schedule_gemm_packed(D)
    (got,) = run(s, [A, B, bt], [D], [a, w, b])
    np.testing.assert_allclose(got, np.maximum(a @ w + b, 0), **TOL)


def test_matmul_packed_dense_weight_and_errors(run, rng):
    a = rng.standard_normal((33, 20)).astype("float32")
    w = rng.standard_normal((24, 20)).astype("float32")      # dense's [N, K]
    with Target("llvm"):
        A, B = te.placeholder(a.shape, name="A"), te.placeholder(w.shape, name="B")
        C = topi.x86.matmul_packed(A, B, transpose_b=True)
        s = topi.x86.schedule_gemm_packed(C)
    (got,) = run(s, [A, B], [C], [a, w])
    np.testing.assert_allclose(got, a @ w.T, **TOL)
    with pytest.raises(compiler.ir.errors.IRError, match="one k block"):
        topi.x86.gemm_packed(te.placeholder((1, 3, 80)), te.placeholder((80, 4)), kc=32)


def test_packed_matmul_applies_to_enough_rows_of_float32():
    applies = topi.x86.packed_matmul_applies
    assert applies((1, 197, 768), (768, 3072), "float32")
    assert applies((197, 1, 768), (768, 2304), "float32")
    assert applies((32, 64), (64, 10), "float32")
    assert not applies((31, 64), (64, 10), "float32")             # too few rows
    assert not applies((1, 64), (64, 1000), "float32")            # a GEMV
    assert applies((2, 197, 64), (64, 64), "float32")             # a batch: 394 rows
    assert applies((1, 56, 56, 96), (96, 384), "float32")         # rows in two dims
    assert not applies((1, 4, 4, 96), (96, 384), "float32")       # 16 rows
    assert not applies((1, "n", 96), (96, 384), "float32")        # symbolic rows
    assert not applies((64, 8192), (8192, 64), "float32")         # more than one k block
    assert not applies((64, 64), (64, 64), "int8")


@pytest.mark.parametrize("k,n,epilogue", [(1040, 512, True), (600, 1000, True),
                                          (600, 1000, False), (256, 2304, True)])
def test_gemv_larger_than_the_cache_streams_rows_of_b(run, rng, k, n, epilogue):
    """One row by a B of at least GEMV_STREAM_BYTES: B is read GEMV_STREAM_ROWS rows at a
    time, the reduction in chunks summed from zero; all of N in one run (N <= GEMV_STREAM_COLS:
    the chunks in parallel, each reading its rows whole) or over column blocks (wider N),
    with and without a bias + relu epilogue; N not whole vectors (1000) too. The result is
    numpy's."""
    from compiler.topi.x86 import gemm
    a = rng.standard_normal((1, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    bias = rng.standard_normal(n).astype("float32")
    assert k * n * 4 >= gemm.GEMV_STREAM_BYTES
    with Target("llvm"):
        A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
        bt = te.placeholder((n,), name="bias")
        C = topi.nn.matmul(A, B)
        D = topi.nn.relu(te.compute(C.shape, lambda i, j: C[i, j] + bt[j], name="add",
                                    tag="elemwise")) if epilogue else C
        s = topi.x86.schedule_matmul([D])
    args = [A, B, bt, D] if epilogue else [A, B, D]
    text = str(compiler.lower(s, args, simple_mode=True))
    assert ".rf" in text          # the reduction in chunks (rfactor)
    rows_whole = n <= gemm.GEMV_STREAM_COLS
    # the chunks' loop is the parallel one (rows whole), or the column blocks' is
    chunks_parallel = any(line.strip().startswith("for k.outer") and "parallel" in line
                          for line in text.splitlines())
    assert chunks_parallel == rows_whole
    (got,) = run(s, args[:-1], [D], [a, b, bias][:len(args) - 1])
    want = np.maximum(a @ b + bias, 0) if epilogue else a @ b
    np.testing.assert_allclose(got, want, **TOL)


def test_gemv_takes_a_wider_tile_where_it_divides_n(run, rng):
    """One row (a matrix-vector product): the tile is GEMV_VECTORS (or half as many) vectors
    wide where that divides N, else the GEMM tile; the result is the same."""
    from compiler.topi.x86.gemm import _gemv_cols
    assert [_gemv_cols(1, n, 16) for n in (1024, 320, 1000, 96)] == [128, 64, None, None]
    assert _gemv_cols(2, 1024, 16) is None
    for n in (256, 200):
        a = rng.standard_normal((1, 40)).astype("float32")
        b = rng.standard_normal((40, n)).astype("float32")
        with Target("llvm"):
            A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
            C = topi.nn.matmul(A, B)
            (got,) = run(topi.x86.schedule_matmul([C]), [A, B], [C], [a, b])
        np.testing.assert_allclose(got, a @ b, **TOL)


@pytest.mark.parametrize("k,n,bias", [(512, 1000, False), (600, 1000, True), (17, 33, True)])
def test_gemm_packed_of_one_row_packs_nothing(run, rng, k, n, bias):
    """One row (a classifier's GEMM): no packing stage (packing B would copy all of it to read
    it once); schedule_gemm_packed tiles the product as a matrix-vector product (B of at least
    GEMV_STREAM_BYTES streamed in chunks of the reduction); with and without a fused bias +
    relu. The result is numpy's. B [N, K] (transpose_b) is still packed."""
    s, ins, out, arrays, ref = _gemm(1, n, k, bias=bias, rng=rng)
    text = str(compiler.lower(s, ins + [out], simple_mode=True))
    assert "T_gemm_pack" not in text
    assert (".rf" in text) == (k * n * 4 >= topi.x86.gemm.GEMV_STREAM_BYTES)
    (got,) = run(s, ins, [out], arrays)
    np.testing.assert_allclose(got, ref, **TOL)
    s, ins, out, arrays, ref = _gemm(1, n, k, transpose_b=True, rng=rng)
    assert "T_gemm_pack_bt" in str(compiler.lower(s, ins + [out], simple_mode=True))
    (got,) = run(s, ins, [out], arrays)
    np.testing.assert_allclose(got, ref, **TOL)
