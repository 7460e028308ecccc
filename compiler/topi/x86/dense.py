"""dense / matmul / dense_pack for x86.

Static shapes get the register tile of the packed GEMM (gemm.tile_gemm: parallel blocks of
mr x nr tiles sized from the target's ISA, an accumulator in registers over the whole
reduction, edge tiles split off by loop_partition). B should be contiguous along the output
columns: `matmul(A, B)` with B [K, N] is (the graph passes turn a dense layer with a constant
weight into such a matmul, transpose_dense_weight), and so is `dense_pack`, which repacks
dense's weight [N, K] into [N / bn, K, bn] panels first. Plain `dense` (weight [N, K]) gets the
same loops with a strided weight read: correct, slower. A symbolic row count gets its own tile
(_symbolic_rows_tile). For a large GEMM of two runtime matrices, gemm.gemm_packed packs both
(what bench/gemm.py measures).

`blocked_gemm` is the older register-blocked schedule of one reduction stage in place (no
accumulator stage), kept for the kernels built with it by hand.
"""
from __future__ import annotations

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from ..nn.dense import add_bias
from ..utils import as_outputs, divisor_at_most, get_const_tuple
from .anchored import accumulator_stages, schedule_anchored
from .gemm import tile_gemm

# Rows of the register tile (unrolled inside the reduction loop).
DENSE_ROWS = 4
# Columns of the register tile (one vector of float32 lanes).
DENSE_COLS = 32
# The tile of a symbolic-M GEMM: rows (unrolled) by columns (two AVX2 vectors).
SYM_ROWS = 4
SYM_COLS = 16
# Rows per parallel task (they share the B panel in cache).
DENSE_ROW_BLOCK = 32


def _factors(m, n, rows, cols, row_block):
    rb = divisor_at_most(m, row_block)
    return rb, divisor_at_most(rb, rows), divisor_at_most(n, cols)


def blocked_gemm(s, C, rows=DENSE_ROWS, cols=DENSE_COLS, row_block=DENSE_ROW_BLOCK,
                 parallel=True):
    """The register-blocked schedule applied to the 2-d reduction stage `C` (C[i, j] =
    sum_k ...), accumulating in place in C's buffer. Returns s."""
    i, j = s[C].op.axis
    (k,) = s[C].op.reduce_axis
    m, n = get_const_tuple(C.shape if hasattr(C, "shape") else C.output(0).shape)
    rb, rows, cols = _factors(m, n, rows, cols, row_block)
    st = s[C]
    io, ii = st.split(i, factor=rb)
    iio, iii = st.split(ii, factor=rows)
    jo, ji = st.split(j, factor=cols)
    st.reorder(io, jo, iio, k, iii, ji)
    st.unroll(iii)
    st.vectorize(ji)
    if parallel:
        st.parallel(io)
    return s


def _tile(s, anchor, out_op):
    m, n = get_const_tuple(anchor.output(0).shape)
    if not isinstance(m, int) and isinstance(n, int):
        _symbolic_rows_tile(s, anchor, out_op, n)
        return
    tile_gemm(s, anchor, out_op)


def _symbolic_rows_tile(s, anchor, out_op, n):
    """The tile for a symbolic row count M and a static N: N in strips of SYM_COLS columns
    (vectors), M in tiles of SYM_ROWS rows (unrolled) accumulated in a local tile over the
    whole reduction. The M-tile loop (and the strip loop when the strip width does not divide
    N) is marked `pragma_loop_partition`: lowering splits it into a guard-free main loop and a
    tail. The strips run in parallel (there is work at M = 1); with one strip, the M tiles
    do."""
    cols = SYM_COLS if n >= SYM_COLS else max(c for c in (8, 4, 2, 1) if c <= n)
    acc, o = accumulator_stages(s, anchor, out_op)
    i, j = o.op.axis
    jo, ji = o.split(j, factor=cols)
    io, ii = o.split(i, factor=SYM_ROWS)
    outer, inner = (jo, io) if n > cols else (io, jo)
    o.reorder(outer, inner, ii, ji)
    o.parallel(outer)
    o.pragma(io, "loop_partition", 1)
    if n % cols:
        o.pragma(jo, "loop_partition", 1)
    o.vectorize(ji)
    a = s[acc]
    a.compute_at(o, inner)
    ai, aj = a.op.axis
    a.reorder(*a.op.reduce_axis, ai, aj)
    a.unroll(ai)
    a.vectorize(aj)


def _packed_weight(s, op):
    st = s[op]
    z, _, x = st.op.axis
    st.parallel(z)
    st.vectorize(x)


def _schedule(outs):
    s = schedule_anchored(as_outputs(outs), lambda t: t in ("dense", "dense_pack", "matmul"),
                          _tile)
    for st in s.stages:
        if st.op.name == "T_packed_weight" and st.attach_type == "root":
            _packed_weight(s, st.op)
    return s


def schedule_dense(outs):
    """Schedule dense / dense_pack / matmul (and the bias, activation... fused after it)."""
    return _schedule(outs)


schedule_dense_pack = schedule_dense
schedule_matmul = schedule_dense


def dense_pack(data, weight, bias=None, out_dtype=None, bn=None):
    """dense with the weight [N, K] repacked into [N / bn, K, bn] panels (a stage of its own,
    "T_packed_weight"), so the blocked schedule reads it contiguously (tag "dense_pack").
    bn defaults to the largest divisor of N up to DENSE_COLS."""
    if data.ndim != 2 or weight.ndim != 2:
        raise IRError("dense_pack: data and weight must be 2-d ([batch, in] and [out, in])")
    out_dtype = as_dtype(out_dtype or data.dtype)
    m, k_ = get_const_tuple(data.shape)
    n, k2 = get_const_tuple(weight.shape)
    if not all(isinstance(v, int) for v in (m, k_, n, k2)) or k_ != k2:
        raise IRError(f"dense_pack: needs static shapes with equal reduction sizes, got data "
                      f"{[str(v) for v in data.shape]} and weight {[str(v) for v in weight.shape]}")
    bn = bn or divisor_at_most(n, DENSE_COLS)
    if n % bn:
        raise IRError(f"dense_pack: bn={bn} does not divide the output size {n}")
    packed = te.compute((n // bn, k_, bn), lambda z, kk, x: weight[z * bn + x, kk],
                        name="T_packed_weight")
    k = te.reduce_axis((0, k_), name="k")

    def acc(v):
        return v if v.dtype == out_dtype else v.astype(out_dtype)

    out = te.compute((m, n), lambda i, j: te.sum(acc(data[i, k])
                                                 * acc(packed[j // bn, k, j % bn]), axis=k),
                     name="T_dense_pack", tag="dense_pack")
    return out if bias is None else add_bias(out, bias)
