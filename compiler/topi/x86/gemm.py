"""The packed GEMM of the CPU targets: C[M, N] = A[M, K] @ B, GotoBLAS style.

    C = topi.x86.gemm_packed(A, B)              # B [K, N]; transpose_b=True: B [N, K]
    s = topi.x86.schedule_gemm_packed(C)        # or [relu(C + bias)]: the epilogue is fused

The register tile (the micro-kernel) is `mr` rows by `nr` columns, sized from the target's
vector unit (`compiler.target.isa.vector_isa`): `nr` is two vectors (16 float32 on AVX2) and
`mr` the rows whose accumulators leave room for the two B vectors and a broadcast (6 on AVX2:
12 accumulators + 2 loads + 1 broadcast = 15 of 16 ymm registers). Inside a tile the
reduction runs outermost: per k step 2 vector loads of B, `mr` broadcasts of A, 2·mr FMAs.

The stages (all but the output are internal):

    T_gemm_pack_a  [M/mr, Kp, mr]   A's rows in panels of mr (pack_a=False: A read in place)
    T_gemm_pack_b  [N/nr, Kp, nr]   B's columns in panels of nr, zero-padded (or given packed)
    T_gemm_acc     the mr x nr accumulator of one tile and one k block (local: registers)
    T_gemm         [M, N] the result, tag "gemm_packed"; bias, activation... fused after it.
                   With k blocks (K > kc) it is the sum over the blocks: accumulated in place
                   in the output, or with an epilogue in a buffer of one mc x nc block that
                   the epilogue reads as it writes the block out.

A GEMM of one row by a B [K, N] has no stages but T_gemm (the product as written): packing
would copy all of B to read it once. `schedule_gemm_packed` tiles it as `tile_gemm` does a
matrix-vector product (B streamed row by row).

Kp is K rounded up to whole k blocks: K is cut into ceil(K / kc) blocks of equal size, so the
padding is less than one element per block; padded columns of A and rows of B hold zeros.
A's rows past M (up to whole panels) repeat row M - 1 and B's columns past N hold zeros: they
only feed accumulator rows and columns that are never stored. So every tile computes a whole
mr x nr accumulator with no bounds check inside its k loop; only the store to T_gemm (or the
epilogue) checks the edges.

Loops (schedule_gemm_packed): blocks of about mc rows (the row blocks evened out, whole tiles)
x nc columns (narrowed to divide N where N is whole tiles) run in parallel (each writes its
own rows and columns of C: no two threads share a cache line of the output but at the block
edges; with two threads each takes half of the column blocks, and so its own half of B),
inside them the k blocks, then the nr-column panels, then the mr-row tiles. A panel of B
(kc x nr) stays in L2 (L1 for kc <= 256) while the tiles of the block's rows pass over it,
the A panels of those tiles streaming past. The tile loops are marked `loop_partition`, so a
block at the edge of the padded tile grid gets a guard-free main loop and a tail. Packing:
A by panels in parallel, each written in order (the mr source rows read side by side); B in
parallel chunks of GEMM_PACK_ROWS rows of K, copied into every panel.

On znver3 (32 KiB L1d, 512 KiB L2 per core) one k block up to K = 2048 measured best: the
per-tile cost of a k block (its accumulators added into the output) outweighs the gain of an
L1-resident B panel, the L2 feeds the B panel at the rate the FMAs need it.

Knobs (keyword arguments, defaults good on a 2-core AVX2 machine without tuning):
    mr, nr        register tile (None: from the target's ISA, `register_tile`)
    kc            reduction block (GEMM_KC); K <= kc gives one block
    pack_a        pack A into panels (True), or read A in place (False: no packing pass; its
                  mr rows are then kc * 4 bytes apart, which aliases in L1 for K a multiple
                  of 1024)
    mc, nc        rows and columns of a parallel block (GEMM_MC, GEMM_NC; rounded to tiles)
    pack_b_in_block  (schedule) pack B per column block inside the block's task, into a
                  buffer that stays in cache (no packed copy of B written to memory), the
                  column blocks alone in parallel: needs N / nc >= the thread count
Measured on the 2-core znver3 machine (bench/gemm.py, 512..2048 square, loaded by other
work): the defaults are at least as fast as pack_a=False or pack_b_in_block=True; those
cut the memory traffic of packing (A not copied at all; B's packed copy kept in cache), which
matters where the memory bandwidth, not the FMAs, limits two threads.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ...target.isa import vector_isa
from ..nn.dense import add_bias, dense_pack_weight_numpy
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import accumulator_stages, schedule_anchored
from .injective import inline_injective_producers

# Reduction block: a B panel of GEMM_KC x nr float32 (128 KiB at nr = 16) stays in L2.
GEMM_KC = 2048
# Rows of a parallel block (rounded down to whole tiles): GEMM_MC / mr tiles pass over each
# B panel while it is in cache.
GEMM_MC = 96
# Columns of a parallel block (rounded down to whole panels).
GEMM_NC = 256
# A GEMM of at least GEMM_PARALLEL_MIN_MACS multiply-adds is cut into at least
# GEMM_MIN_BLOCKS parallel blocks (narrower than nc where it has fewer), so
# that a small GEMM (a transformer's 64 x 128 x 128) still runs on 2-4 threads, and a
# matrix-vector product whose weights exceed one core's L2 (an MLP's 1 x 784 x 256, 200K
# multiply-adds: 29 -> 12 us on 2 threads) reads them through several.
GEMM_MIN_BLOCKS = 4
# Fewer parallel blocks than this are made an even number (narrower column blocks): an odd
# count leaves one of two threads a block more (ViT-B/16's 197 x 3072 x 768 in 3 x 3 blocks
# ran 1.75x faster on 2 threads than on 1; in 3 x 6, 1.97x).
GEMM_EVEN_BLOCKS = 32
GEMM_PARALLEL_MIN_MACS = 1 << 17
# Packing B [K, N]: parallel chunks of GEMM_PACK_ROWS rows of K, copied panel by panel.
GEMM_PACK_ROWS = 8
# tile_gemm: a reduction longer than this is summed in chunks of about this many steps
# (`_sum_in_chunks`).
GEMM_SUM_CHUNK = 128
# Vectors of B per tile row (the tile is GEMM_VECTORS vectors wide).
GEMM_VECTORS = 2
# At most this many rows per tile (wide ISAs with many registers would unroll further).
GEMM_MAX_ROWS = 8
# A matrix-vector product's tile: up to this many vectors of columns (`_gemv_cols`).
GEMV_VECTORS = 8
# A matrix-vector product whose B is at least this many bytes (past the 1 MiB L2) streams B
# (`_stream_gemv`) in row runs of up to GEMV_STREAM_COLS columns.
GEMV_STREAM_BYTES = 3 << 19
GEMV_STREAM_COLS = 2048
# ... GEMV_STREAM_ROWS rows of B at a time (as many streams, and one load and store of a
# vector of sums per that many multiply-adds).
GEMV_STREAM_ROWS = 8

PACKED_TAG = "gemm_packed"
# A model's matmul takes the packed GEMM (`matmul_packed`) from this many rows: B is packed
# at every call, which pays where mr-row tiles reuse each panel several times (ViT-B/16's
# 197 x 3072 x 768: 22 -> 10 ms at 1 thread; tile_gemm reads B [K, N] in place, a cache line
# per row of K and one TLB page every few rows). Fewer rows keep tile_gemm.
PACKED_MIN_ROWS = 32
# ... and up to this reduction (one k block with the panel in L2; an A of 3 dims needs one).
PACKED_MAX_K = 4096


def register_tile(target=None, dtype="float32") -> Tuple[int, int]:
    """(mr, nr) of the micro-kernel for `target` (None: the current target, else the host):
    nr = GEMM_VECTORS vectors of `dtype`; mr = the rows whose GEMM_VECTORS accumulators each
    fit beside the GEMM_VECTORS B vectors and one broadcast (AVX2: 6 x 16, AVX-512: 8 x 32,
    NEON: 8 x 8, SSE: 6 x 8)."""
    isa = vector_isa(target)
    nv = GEMM_VECTORS
    mr = max(1, min(GEMM_MAX_ROWS, (isa.registers - nv - 1) // nv))
    return mr, nv * isa.lanes(str(dtype))


def k_blocks(k: int, kc: int = GEMM_KC) -> Tuple[int, int]:
    """(number of k blocks, block size) for a reduction of `k`: ceil(k / kc) blocks of equal
    size (the padded reduction is their product, less than one element per block over k)."""
    nb = max(1, -(-k // kc))
    return nb, -(-k // nb)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pack_b_shape(n: int, k: int, nr: int, kc: int = GEMM_KC) -> Tuple[int, int, int]:
    """The shape of B packed for gemm_packed: [ceil(n / nr), padded k, nr]."""
    nb, kb = k_blocks(k, kc)
    return _cdiv(n, nr), nb * kb, nr


def pack_b_numpy(b, nr: int, kc: int = GEMM_KC, transpose_b: bool = False):
    """A numpy B ([K, N], or [N, K] with transpose_b) packed as T_gemm_pack_b lays it out, for
    a constant B packed once at compile time (gemm_packed(..., b_packed=True, n=N))."""
    bt = np.asarray(b) if transpose_b else np.asarray(b).T          # [N, K]
    n, k = bt.shape
    kp = pack_b_shape(n, k, nr, kc)[1]
    return dense_pack_weight_numpy(np.pad(bt, ((0, 0), (0, kp - k))), nr, "NK")


def _padded(cond_needed: bool, cond, value, dtype):
    return te.if_then_else(cond, value, te.const(0, dtype)) if cond_needed else value


def row_axes(lead) -> Tuple[int, ...]:
    """The axes of `lead` (A's dimensions but the last) that hold the GEMM's rows: those that
    are not 1 (the last where all are 1). Several are read as one flat row index (row-major),
    so ConvNeXt's [1, 14, 14, K] activations are a GEMM of 196 rows."""
    big = tuple(i for i, d in enumerate(lead) if d != 1)
    return big or (len(lead) - 1,)


def gemm_packed(a, b, bias=None, out_dtype=None, transpose_b: bool = False,
                b_packed: bool = False, n: Optional[int] = None, mr: Optional[int] = None,
                nr: Optional[int] = None, kc: int = GEMM_KC, pack_a: bool = True):
    """C = A @ B (+ bias) through packed panels (tag "gemm_packed"; see the module docstring).

    a: [M, K], or [..., K] whose leading dimensions are rows: a model's [1, L, K] or
    [1, H, W, K] activations, read in place as M = L or H * W rows (row-major); C then has
    A's leading shape ([1, L, N], [1, H, W, N]) and K must fit one k block (K <= kc).
    b: [K, N]; with transpose_b [N, K] (dense's weight); with b_packed the
    packed [ceil(N / nr), Kp, nr] that `pack_b_numpy` makes (then `n` gives N, and nr is b's
    last dimension). Static shapes. mr, nr: the register tile (None: `register_tile` of the
    current target); kc: the reduction block; pack_a: pack A into panels (False: read it in
    place). See the module docstring for what each does."""
    if a.ndim < 2:
        raise IRError(f"gemm_packed: A must be [M, K] or [..., M, K], got {a.ndim} dims")
    lead = get_const_tuple(a.shape[:-1])
    k = get_const_tuple(a.shape)[-1]
    axes = row_axes(lead)
    m = int(np.prod([lead[d] for d in axes]))

    def a_read(row, kk):
        idx = [0] * len(lead)
        for d in reversed(axes[1:]):
            idx[d] = row % lead[d]
            row = row // lead[d]
        idx[axes[0]] = row
        return a[tuple(idx) + (kk,)]

    out_dtype = as_dtype(out_dtype or a.dtype)
    dmr, dnr = register_tile(None, str(out_dtype))
    mr = mr or dmr
    if b_packed:
        if b.ndim != 3 or n is None:
            raise IRError("gemm_packed: a packed B is 3-d [N / nr, Kp, nr] (pack_b_numpy) and "
                          "needs n=N")
        nt, kp_b, nr_b = get_const_tuple(b.shape)
        nr = nr_b
    else:
        if b.ndim != 2:
            raise IRError(f"gemm_packed: B must be 2-d, got {b.ndim} dims")
        n, k2 = get_const_tuple(b.shape) if transpose_b else get_const_tuple(b.shape)[::-1]
        nr = nr or dnr
        if k2 != k:
            raise IRError(f"gemm_packed: the reduction sizes differ ({k} vs {k2})")
    if not all(isinstance(v, int) for v in (m, n, k)):
        raise IRError("gemm_packed: needs static shapes; use topi.nn.matmul for symbolic ones")

    def cast(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    if m == 1 and len(lead) == 1 and not (b_packed or transpose_b):
        # One row: packing would copy all of B to read it once. C is the product as written,
        # which schedule_gemm_packed tiles as a matrix-vector product (`tile_gemm`).
        r = te.reduce_axis((0, k), name="k")
        out = te.compute((1, n), lambda i, j: te.sum(cast(a[i, r]) * cast(b[r, j]), axis=r),
                         name="T_gemm", tag=PACKED_TAG)
        return out if bias is None else add_bias(out, bias)
    nb, kb = k_blocks(k, kc)
    if nb > 1 and len(lead) > 1:
        raise IRError(f"gemm_packed: an A of {len(lead) + 1} dims needs K <= kc (one k block), "
                      f"got K={k}, kc={kc}")
    kp = nb * kb
    mt, nt = _cdiv(m, mr), _cdiv(n, nr)
    if b_packed and (nt, kp) != (get_const_tuple(b.shape)[0], kp_b):
        raise IRError(f"gemm_packed: packed B has shape {get_const_tuple(b.shape)}, expected "
                      f"{pack_b_shape(n, k, nr, kc)} for N={n}, K={k}, kc={kc}")
    dt = str(out_dtype)

    pad_k = kp != k

    def a_at(io, kk, ii):
        # rows past M repeat row M - 1: they only feed accumulator rows that are never
        # stored, so they need no zeros (and no guard); columns past K must be zero
        row = io * mr + ii
        if m % mr:
            row = te.min(row, m - 1)
        if not pad_k:
            return cast(a_read(row, kk))
        return _padded(True, kk < k, cast(a_read(row, te.min(kk, k - 1))), dt)

    if pack_a:
        pa = te.compute((mt, kp, mr), a_at, name="T_gemm_pack_a")

        def a_tile(it, kk, ii):
            return pa[it, kk, ii]
    else:
        a_tile = a_at
    if b_packed:
        pb = b
    else:
        def fb(jo, kk, ji):
            v = b[jo * nr + ji, kk] if transpose_b else b[kk, jo * nr + ji]
            return _padded(n % nr != 0 or pad_k, te.all(jo * nr + ji < n, kk < k), cast(v), dt)

        pb = te.compute((nt, kp, nr), fb,
                        name="T_gemm_pack_bt" if transpose_b else "T_gemm_pack_b")
    if nb == 1:
        r = te.reduce_axis((0, kp), name="k")
        acc = te.compute((mt, nt, mr, nr),
                         lambda it, jt, ii, ji: te.sum(a_tile(it, r, ii) * cast(pb[jt, r, ji]),
                                                       axis=r),
                         name="T_gemm_acc")
        def at(*idx):
            i, j = idx[axes[0]], idx[-1]
            for d in axes[1:]:
                i = i * lead[d] + idx[d]
            return acc[i // mr, j // nr, i % mr, j % nr]

        out = te.compute(lead + (n,), at, name="T_gemm", tag=PACKED_TAG)
    else:
        r = te.reduce_axis((0, kb), name="k")
        acc = te.compute((nb, mt, nt, mr, nr),
                         lambda q, it, jt, ii, ji: te.sum(
                             a_tile(it, q * kb + r, ii) * cast(pb[jt, q * kb + r, ji]), axis=r),
                         name="T_gemm_acc")
        rq = te.reduce_axis((0, nb), name="kblock")
        out = te.compute((m, n), lambda i, j: te.sum(acc[rq, i // mr, j // nr, i % mr, j % nr],
                                                     axis=rq),
                         name="T_gemm", tag=PACKED_TAG)
    return out if bias is None else add_bias(out, bias)


def matmul_prepacked(a, packed, units: int, out_dtype=None):
    """A model's dense by a constant weight packed before the call (nn.contrib_dense_pack:
    `packed` [ceil(units / nr), K, nr], topi.nn.dense_pack_weight) as `gemm_packed` with one
    k block and no packing of B. Schedule it with `schedule_gemm_packed`."""
    k = get_const_tuple(a.shape)[-1]
    return gemm_packed(a, packed, None, out_dtype, b_packed=True, n=units, kc=max(GEMM_KC, k))


def packed_matmul_applies(a_shape, b_shape, dtype: str) -> bool:
    """Whether a model's GEMM of A `a_shape` ([..., K], its leading dimensions the rows) by a
    2-d B `b_shape` of `dtype` takes `matmul_packed`: static float32 shapes, at least
    PACKED_MIN_ROWS rows and K <= PACKED_MAX_K."""
    if a_shape is None or b_shape is None or len(a_shape) < 2 or len(b_shape) != 2 \
            or str(dtype) != "float32" or not all(isinstance(d, int) for d in a_shape):
        return False
    return int(np.prod(a_shape[:-1])) >= PACKED_MIN_ROWS and a_shape[-1] <= PACKED_MAX_K


def matmul_packed(a, b, out_dtype=None, transpose_b: bool = False):
    """A model's matmul (B [K, N]) or dense (transpose_b: B [N, K]) as `gemm_packed` with one k
    block: A [M, K] or [..., K] (its leading dimensions all 1 but one), C in A's leading
    shape.
    Schedule it with `schedule_gemm_packed`."""
    k = get_const_tuple(a.shape)[-1]
    return gemm_packed(a, b, None, out_dtype, transpose_b, kc=max(GEMM_KC, k))


def _stage_inputs(op):
    return {t.op.name: t.op for t in op.input_tensors}


def _tile_packed(s, anchor, out_op, mc: int, nc: int, pack_b_in_block: bool = False):
    """Lay out the output stage `out_op` in parallel mc x nc blocks of mr x nr tiles and
    attach the accumulators (see the module docstring). A GEMM of one row, computed as
    written, is tiled as a matrix-vector product (`tile_gemm`)."""
    acc = _stage_inputs(anchor).get("T_gemm_acc")
    if acc is None:
        tile_gemm(s, anchor, out_op)
        return
    mt, nt, mr, nr = get_const_tuple(acc.output(0).shape[-4:])
    blocked = bool(anchor.reduce_axis)
    if out_op is not anchor and not blocked:
        s[anchor].compute_inline()
    o = s[out_op]
    *lead, j = o.op.axis
    shape = get_const_tuple(anchor.output(0).shape)
    axes = row_axes(shape[:-1])
    rows = [lead[d] for d in axes]
    units = [ax for d, ax in enumerate(lead) if d not in axes]   # extent 1, outermost
    if len(rows) > 1:
        o.reorder(*units, *rows, j)
    i = o.fuse(*rows) if len(rows) > 1 else rows[0]              # the rows
    # rows in blocks of about mc, evened out (197 rows: 72 + 72 + 53, not 96 + 96 + 5, which
    # left one of two threads twice the other's work)
    mcb = _cdiv(mt, _cdiv(mt, max(1, mc // mr))) * mr
    # columns in blocks narrow enough for several parallel blocks (a 32 x 512 x 128 GEMM in
    # one block ran on one thread: two were slower than one, by the packing's launches)
    (k,) = get_const_tuple((acc.reduce_axis[0].dom.extent,))
    ncb = parallel_block(mt * mr, shape[-1], k, 1, mcb, max(1, min(nc // nr, nt)) * nr, nr)
    ic, ir = o.split(i, factor=mcb)
    jc, jr = o.split(j, factor=ncb)
    if out_op is anchor or not blocked:
        # the tiles of the output stage itself (k blocks: summed in place in the output)
        it, ii = o.split(ir, factor=mr)
        jt, ji = o.split(jr, factor=nr)
        o.reorder(*units, jc, ic, *o.op.reduce_axis, jt, it, ii, ji)
        block = o.fuse(*units, jc) if pack_b_in_block else o.fuse(*units, jc, ic)
        t, t_it, t_jt, t_ii = o, it, jt, ii
    else:
        # k blocks with an epilogue: the block's sum in a buffer of its own, the epilogue
        # applied as it is copied out
        o.reorder(*units, jc, ic, ir, jr)
        block = o.fuse(*units, jc) if pack_b_in_block else o.fuse(*units, jc, ic)
        t = s[anchor]
        t.compute_at(o, ic if pack_b_in_block else block)
        ti, tj = t.op.axis
        t_it, t_ii = t.split(ti, factor=mr)
        t_jt, t_ji = t.split(tj, factor=nr)
        t.reorder(*t.op.reduce_axis, t_jt, t_it, t_ii, t_ji)
        t.unroll(t_ii)
        t.vectorize(t_ji)
        _, oji = o.split(jr, factor=nr)
        o.vectorize(oji)
    o.parallel(block)
    a = s[acc]
    a.set_scope("local")
    a.compute_at(t, t_it)
    t.pragma(t_it, "loop_partition", 1)
    t.pragma(t_jt, "loop_partition", 1)
    a = _sum_in_chunks(s, acc.output(0), get_const_tuple((acc.reduce_axis[0].dom.extent,))[0])
    *_, aii, aji = a.op.axis
    a.reorder(*a.op.axis[:-2], *a.op.reduce_axis, aii, aji)
    a.unroll(aii)
    a.vectorize(aji)
    if t is o:
        o.unroll(t_ii)
        o.vectorize(ji)
    for name, op in _stage_inputs(acc).items():
        if not name.startswith("T_gemm_pack_"):
            continue
        in_block = pack_b_in_block and name != "T_gemm_pack_a"
        if in_block:
            s[op].compute_at(o, block)
        _schedule_pack(s, op, contiguous_width=name == "T_gemm_pack_b", parallel=not in_block)
        inline_injective_producers(s, op, set())


def _schedule_pack(s, op, contiguous_width: bool, parallel: bool = True):
    """A packing stage [panels, K, width]. B [K, N] (contiguous along the panel width): K in
    parallel chunks of GEMM_PACK_ROWS rows, each copied into every panel (whole rows of B
    read, GEMM_PACK_ROWS x width contiguous elements written per panel), the width
    vectorized. A [M, K] and B [N, K] (contiguous along K): panels in parallel, K inside,
    the width unrolled (width source rows read side by side, the panel written in order)."""
    st = s[op]
    z, kk, x = st.op.axis
    if contiguous_width:
        kp = get_const_tuple(op.output(0).shape)[1]
        ko, ki = st.split(kk, factor=min(GEMM_PACK_ROWS, kp))
        st.reorder(ko, z, ki, x)
        if parallel:
            st.parallel(ko)
        st.vectorize(x)
    else:
        if parallel:
            st.parallel(z)
        st.unroll(x)


def schedule_gemm_packed(outs, mc: int = GEMM_MC, nc: int = GEMM_NC,
                         pack_b_in_block: bool = False):
    """Schedule gemm_packed and what is fused after it (bias, activation...). mc, nc: rows
    and columns of a parallel block (rounded down to whole tiles). pack_b_in_block: pack B
    per column block, into a buffer of the block's task (its nc columns, all of K) that the
    block's mc-row blocks then share, the column blocks alone in parallel; else B is packed
    once, in parallel, before the blocks."""
    return schedule_anchored(as_outputs(outs), lambda t: t == PACKED_TAG,
                             lambda s, anchor, out_op: _tile_packed(s, anchor, out_op, mc, nc,
                                                                    pack_b_in_block))


def _fit_cols(n, nr: int, lanes: int) -> int:
    """The tile width for `n` output columns: nr, or for fewer columns the largest multiple of
    the vector width (else power of two) not above n. Where nr-wide tiles would leave more
    than a vector's remainder (a scalar tail: N = 49 in tiles of 32 leaves 17), the widest
    multiple of the vector width that leaves less (16: three tiles, one column over)."""
    if not isinstance(n, int):
        return nr
    if n >= nr:
        if n % nr > n % lanes:
            return max(w for w in range(lanes, nr, lanes) if n % w == n % lanes)
        return nr
    if n >= lanes:
        return n // lanes * lanes
    return max(c for c in (8, 4, 2, 1) if c <= n)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _dividing_block(n, ncb: int, nr: int) -> int:
    """The widest block of whole tiles, at most ncb, that divides n when n is a whole number of
    tiles (so no block ends inside the output and no tile has a bounds check: N = 384 with
    ncb = 256 would put a guard in every tile and leave the vector loop scalar, 30x slower);
    else ncb."""
    if not isinstance(n, int) or n % nr or n <= ncb:
        return ncb
    tiles = n // nr
    return nr * max(d for d in range(1, ncb // nr + 1) if tiles % d == 0)


def parallel_block(m, n, k, batch: int, mcb: int, ncb: int, nr: int) -> int:
    """The columns of a parallel block: ncb, halved (in whole tiles) until a GEMM of at least
    GEMM_PARALLEL_MIN_MACS has GEMM_MIN_BLOCKS blocks, and then while it has an odd number of
    them below GEMM_EVEN_BLOCKS (blocks counted as narrowed to divide N, `_dividing_block`), or
    until a block is one tile wide. Rows are left alone: a row block that is not a
    multiple of the tile leaves a guard in every tile (measured 25% slower on one thread)."""
    if all(isinstance(v, int) for v in (m, n, k)) and m * n * k * batch >= \
            GEMM_PARALLEL_MIN_MACS:
        def blocks(cb):
            return _ceil(m, mcb) * _ceil(n, _dividing_block(n, cb, nr)) * batch

        while blocks(ncb) < GEMM_MIN_BLOCKS and ncb > nr:
            ncb = max(nr, ncb // 2 // nr * nr)
        while blocks(ncb) % 2 and blocks(ncb) < GEMM_EVEN_BLOCKS and ncb > nr:
            ncb = max(nr, ncb // 2 // nr * nr)
    return _dividing_block(n, ncb, nr)


def tile_gemm(s, anchor, out_op, mr: Optional[int] = None, nr: Optional[int] = None,
              mc: int = GEMM_MC, nc: int = GEMM_NC, parallel: bool = True):
    """The register tile of the packed GEMM, for a GEMM computed as written (no packing
    stages): `anchor` is a reduction [..., M, N] (dense, matmul, batch_matmul; static M and
    N), `out_op` the stage that writes the result (the anchor or the epilogue after it).

    The output is cut into parallel blocks of mc x nc (and the leading batch axes; narrower
    where a GEMM would have fewer than GEMM_MIN_BLOCKS, `parallel_block`), those into tiles of
    mr rows x nr columns; an mr x nr accumulator in registers is computed at each
    tile with the whole reduction outermost, rows unrolled, columns vectorized. B should be
    contiguous along N (matmul's [K, N]; dense's constant weights are transposed so at
    compile time, transpose_dense_weight); a tile at the edge (M % mr, N % nr) is the tail of
    a `loop_partition` loop, so the other tiles have no bounds check. Fewer rows than mr give
    a tile of M rows; fewer columns than nr a narrower one; one row (a matrix-vector product)
    a wider one where it divides N (`_gemv_cols`). Returns s."""
    shape = get_const_tuple(anchor.output(0).shape)
    m, n = shape[-2:]
    if 0 in shape:
        return s    # an empty output: nothing to compute, the loops as written are fine
    dmr, dnr = register_tile(None, str(anchor.output(0).dtype))
    lanes = max(1, dnr // GEMM_VECTORS)
    # One row per batch ([L, 1, K] @ [K, N], as a sequence-first attention projection computes
    # it): the leading axes are fused into the rows, so a tile holds mr of them, not one.
    rows = m == 1 and len(shape) > 2 and all(isinstance(d, int) for d in shape)
    if rows:
        m = 1
        for d in shape[:-1]:
            m *= d
    k = get_const_tuple(tuple(r.dom.extent for r in anchor.reduce_axis))
    if (m == 1 and not rows and len(shape) == 2 and isinstance(n, int) and len(k) == 1
            and isinstance(k[0], int) and mr is None and nr is None
            and k[0] * n * anchor.output(0).dtype.bytes >= GEMV_STREAM_BYTES):
        return _stream_gemv(s, anchor, out_op, n, k[0], lanes, parallel)
    mr = min(mr or dmr, m) if isinstance(m, int) else (mr or dmr)
    nr = _fit_cols(n, nr or _gemv_cols(m, n, lanes) or dnr, lanes)
    acc, o = accumulator_stages(s, anchor, out_op)
    if out_op is not anchor:
        s[acc].set_scope("local")
    if rows:
        *lead, j = o.op.axis
        batch, i = [], o.fuse(*lead)
    else:
        *batch, i, j = o.op.axis
    batches = 1
    for d in (() if rows else shape[:-2]):
        batches *= d if isinstance(d, int) else 1 << 10
    mcb = max(1, mc // mr) * mr
    ncb = parallel_block(m, n, k[0] if len(k) == 1 else None, batches, mcb,
                         max(1, nc // nr) * nr, nr)
    ic, ir = o.split(i, factor=mcb)
    jc, jr = o.split(j, factor=ncb)
    it, ii = o.split(ir, factor=mr)
    jt, ji = o.split(jr, factor=nr)
    o.reorder(*batch, jc, ic, jt, it, ii, ji)
    block = o.fuse(*batch, jc, ic)
    if parallel:
        o.parallel(block)
    o.vectorize(ji)
    # an uneven block (M % mcb, N % ncb) leaves a guard in its tiles: the tile loops are
    # partitioned into guard-free tiles and a tail
    if not isinstance(m, int) or m % mcb:
        o.pragma(it, "loop_partition", 1)
    if not isinstance(n, int) or n % ncb:
        o.pragma(jt, "loop_partition", 1)
    a = s[acc]
    a.compute_at(o, it)
    a = _sum_in_chunks(s, acc, k[0] if len(k) == 1 else None, rows)
    *a_outer, ai, aj = _tile_axes(a, a.op.axis, rows)
    a.reorder(*a_outer, *a.op.reduce_axis, ai, aj)
    a.unroll(ai)
    a.vectorize(aj)
    return s


def _stream_gemv(s, anchor, out_op, n: int, k: int, lanes: int, parallel: bool):
    """A matrix-vector product x [1, K] @ B [K, N] whose B is larger than the cache: B read
    row by row in runs of a column block (up to GEMV_STREAM_COLS, at least two blocks for two
    threads), into the block's sums in L1; the reduction in chunks of GEMM_SUM_CHUNK steps
    (each summed from zero, then added). A register tile would read each row of B in runs
    of its width only, one page apart: AlexNet's 1 x 9216 x 4096 read 151 MB at 7 GB/s."""
    chunk = divisor_at_most(k, GEMM_SUM_CHUNK)
    if n <= GEMV_STREAM_COLS and chunk * 4 >= GEMM_SUM_CHUNK and k // chunk >= 2:
        return _stream_gemv_rows(s, anchor, out_op, k, chunk, lanes, parallel)
    acc, o = accumulator_stages(s, anchor, out_op)
    s[acc].set_scope("local")
    i, j = o.op.axis
    ncb = min(GEMV_STREAM_COLS, _ceil(_ceil(n, 2), lanes) * lanes)
    ncb = _dividing_block(n, ncb, lanes) if n % lanes == 0 else ncb
    jc, jr = o.split(j, factor=ncb)
    block = o.fuse(i, jc)
    if parallel:
        o.parallel(block)
    jo, ji = o.split(jr, factor=lanes)
    o.vectorize(ji)
    o.pragma(jo, "loop_partition", 1)   # N not whole vectors: a guard in the last one only
    a = s[acc]
    a.compute_at(o, block)
    chunk = divisor_at_most(k, GEMM_SUM_CHUNK)
    if chunk * 4 >= GEMM_SUM_CHUNK and k > GEMM_SUM_CHUNK:
        chunks, _ = a.split(a.op.reduce_axis[0], factor=chunk)
        part = s[s.rfactor(acc, chunks)]
        part.set_scope("local")
        ai, aj = a.op.axis
        ajo, aji = a.split(aj, factor=lanes)
        a.reorder(ai, a.op.reduce_axis[0], ajo, aji)
        a.vectorize(aji)
        a.pragma(ajo, "loop_partition", 1)
        part.compute_at(a, a.op.reduce_axis[0])
        a = part
    *outer, pj = a.op.axis
    pjo, pji = a.split(pj, factor=lanes)
    (r,) = a.op.reduce_axis
    rows = divisor_at_most(get_const_tuple((r.dom.extent,))[0], GEMV_STREAM_ROWS)
    ro, ri = a.split(r, factor=rows)
    a.reorder(*outer, ro, pjo, ri, pji)
    a.unroll(ri)
    a.vectorize(pji)
    a.pragma(pjo, "loop_partition", 1)
    return s


def _stream_gemv_rows(s, anchor, out_op, k: int, chunk: int, lanes: int, parallel: bool):
    """`_stream_gemv` where all of N fits one run (N <= GEMV_STREAM_COLS): the chunks of
    `chunk` rows of B (the reduction's chunks, each summed from zero) run in parallel, each
    reading its rows of B whole (one contiguous stream; column blocks would read every row in
    pieces, a classifier's 1 x 512 x 1000: 31 -> 41 GFLOP/s at 1 thread), into a row of
    partial sums; the output adds the chunks' sums in order (the same sums as `_stream_gemv`
    makes)."""
    acc, o = accumulator_stages(s, anchor, out_op)
    a = s[acc]
    chunks, _ = a.split(a.op.reduce_axis[0], factor=chunk)
    part = s[s.rfactor(acc, chunks)]
    c, *_, pj = part.op.axis
    if parallel:
        part.parallel(c)
    (r,) = part.op.reduce_axis
    pjo, pji = part.split(pj, factor=lanes)
    ro, ri = part.split(r, factor=divisor_at_most(chunk, GEMV_STREAM_ROWS))
    part.reorder(c, *part.op.axis[1:-1], ro, pjo, ri, pji)
    part.unroll(ri)
    part.vectorize(pji)
    part.pragma(pjo, "loop_partition", 1)   # N not whole vectors: a guard in the last one only
    i, j = o.op.axis
    jo, ji = o.split(j, factor=lanes)
    o.vectorize(ji)
    o.pragma(jo, "loop_partition", 1)
    a.set_scope("local")
    a.compute_at(o, jo)
    ai, aj = a.op.axis
    a.reorder(*a.op.reduce_axis, ai, aj)
    a.vectorize(aj)
    return s


def _gemv_cols(m, n, lanes: int) -> Optional[int]:
    """The tile width of a matrix-vector product (one row): the widest of GEMV_VECTORS,
    GEMV_VECTORS / 2 ... vectors down to GEMM_VECTORS * 2 that divides N (more independent
    sums than the two vectors of a GEMM tile, whose multiply-adds then wait on each other's
    latency, and longer contiguous runs of each row of B: 1 x 576 x 1024 90 -> 29 us at 1
    thread); None where none divides N or there are several rows."""
    if m != 1 or not isinstance(n, int):
        return None
    v = GEMV_VECTORS
    while v > GEMM_VECTORS:
        if n % (v * lanes) == 0:
            return v * lanes
        v //= 2
    return None


def _tile_axes(stage, axes, rows: bool):
    """`axes` of a stage computed at a tile, the leading ones fused into one row axis when the
    tile's rows are the leading axes (`tile_gemm`'s one-row-per-batch case)."""
    axes = list(axes)
    if not rows:
        return axes
    return [stage.fuse(*axes[:-1]), axes[-1]]


def _sum_in_chunks(s, acc, k, rows: bool = False):
    """The stage that runs the tile's reduction loop: `acc`'s own, or where the reduction `k`
    is longer than GEMM_SUM_CHUNK, a local stage summing one chunk of it from zero, added to
    the tile's accumulators after each chunk (`acc` reduced over the chunks). A running sum
    over the whole of K rounds each step at the size of the whole sum; in chunks the error
    of a 512-long dot product is about halved, and the extra adds are one per chunk."""
    a = s[acc]
    chunk = divisor_at_most(k, GEMM_SUM_CHUNK) if isinstance(k, int) else 0
    if k is None or k <= GEMM_SUM_CHUNK or chunk * 4 < GEMM_SUM_CHUNK:
        return a
    chunks, _ = a.split(a.op.reduce_axis[0], factor=chunk)
    part = s[s.rfactor(acc, chunks)]
    part.set_scope("local")
    *a_outer, ai, aj = _tile_axes(a, a.op.axis, rows)
    over = a.op.reduce_axis[0]
    a.reorder(*a_outer, over, ai, aj)
    a.unroll(ai)
    a.vectorize(aj)
    part.compute_at(a, over)
    return part
