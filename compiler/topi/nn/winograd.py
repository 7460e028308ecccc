"""Winograd convolution F(m x m, 3 x 3) in the blocked layout NCHW[x]c (stride 1, dilation 1).

An output tile of m x m pixels is computed from an input tile of a x a (a = m + 2) as
Y = At [ (G g Gt) * (Bt d B) ] A, where g is a 3 x 3 filter, d the input tile and `*` the
elementwise product over the a x a transformed points; summed over input channels, the
product is one matrix multiplication per point (a x a of them). For m = 2 that is 16
multiply-adds per tile where the direct form takes 36 (2.25x fewer), for m = 4, 36 where it
takes 144 (4x fewer), at the price of the transforms and, for m = 4, of larger rounding.

    U = winograd_weight_transform(w, m)       # numpy, at compile time: [a*a, O/o, I, o]
    U = winograd_weight_transform_compute(w, m)   # the same as a kernel (at load time)
    y = conv2d_winograd_NCHWc(x, U, m, pad)   # x [N, I/i, H, W, i] -> [N, O/o, OH, OW, o]

Stages of `conv2d_winograd_NCHWc` (named for `schedule_conv2d_winograd_NCHWc`):
  pad          the input zero-padded so that the tiles cover the output (tag "pad");
  wino_columns the input transform's first half (Bt d), by columns [a, a, P, I];
  wino_input   V [a*a, P, I]: each tile's input transformed (P tiles, I input channels);
  wino_gemm    M [a*a, O/o, P, o] = V[e] @ U[e] for each point e (a reduction over I);
  wino_rows    the output transform's first half (M A) [N, O/o, tile rows, a, tiles * m, o];
  the output   Y [N, O/o, OH, OW, o]: each tile's points transformed back (tag
               "conv2d_winograd_NCHWc"; no reduction, so the epilogue is computed with it).
The transforms are written as sums of the non-zero terms only, chosen by the point (or
output pixel) index: once the schedule unrolls those loops the choice is constant.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from ... import te
from ...ir.dtype import as_dtype
from ...ir.errors import IRError
from .pad import pad as pad_op

__all__ = ["WINOGRAD_TILES", "conv2d_winograd_NCHWc", "winograd_matrices",
           "winograd_weight_transform"]

# F(m, 3): (At [m, a], G [a, 3], Bt [a, a]), a = m + 2, from Lavin and Gray's "Fast
# Algorithms for Convolutional Neural Networks" (points 0, 1, -1 and infinity for m = 2;
# 0, 1, -1, 2, -2 and infinity for m = 4).
_MATRICES = {
    2: ([[1, 1, 1, 0],
         [0, 1, -1, -1]],
        [[1, 0, 0],
         [1 / 2, 1 / 2, 1 / 2],
         [1 / 2, -1 / 2, 1 / 2],
         [0, 0, 1]],
        [[1, 0, -1, 0],
         [0, 1, 1, 0],
         [0, -1, 1, 0],
         [0, 1, 0, -1]]),
    4: ([[1, 1, 1, 1, 1, 0],
         [0, 1, -1, 2, -2, 0],
         [0, 1, 1, 4, 4, 0],
         [0, 1, -1, 8, -8, 1]],
        [[1 / 4, 0, 0],
         [-1 / 6, -1 / 6, -1 / 6],
         [-1 / 6, 1 / 6, -1 / 6],
         [1 / 24, 1 / 12, 1 / 6],
         [1 / 24, -1 / 12, 1 / 6],
         [0, 0, 1]],
        [[4, 0, -5, 0, 1, 0],
         [0, -4, -4, 1, 1, 0],
         [0, 4, -4, -1, 1, 0],
         [0, -2, -1, 2, 1, 0],
         [0, 2, -1, -2, 1, 0],
         [0, 4, 0, -5, 0, 1]]),
}
# The output tile sizes m that have matrices.
WINOGRAD_TILES = tuple(sorted(_MATRICES))


def winograd_matrices(m: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(At [m, a], G [a, 3], Bt [a, a]) of F(m, 3) as float64: a correlation of a length-a
    input d with a 3-tap filter g is At @ ((G @ g) * (Bt @ d))."""
    if m not in _MATRICES:
        raise IRError(f"winograd: output tile {m} is not supported; use one of "
                      f"{WINOGRAD_TILES}")
    return tuple(np.array(x, dtype=np.float64) for x in _MATRICES[m])


def winograd_weight_transform(weight: np.ndarray, m: int) -> np.ndarray:
    """Blocked 3 x 3 weights [O/o, I/i, 3, 3, i, o] -> U [a*a, O/o, I, o] (float32), I the
    input channels in block order (block * i + lane)."""
    ocb, icb, kh, kw, ib, ob = weight.shape
    if (kh, kw) != (3, 3):
        raise IRError(f"winograd: a {kh}x{kw} kernel; only 3x3 has a transform")
    _, g, _ = winograd_matrices(m)
    a = m + 2
    # G g Gt for every 3 x 3 filter g (a batched matrix product in float32: its rounding is
    # far below the algorithm's), then the points outermost
    g = g.astype(np.float32)
    taps = weight.astype(np.float32).transpose(0, 1, 4, 5, 2, 3).reshape(-1, 3, 3)
    u = (g @ taps @ g.T).reshape(ocb, icb, ib, ob, a, a).transpose(4, 5, 0, 1, 2, 3)
    return np.ascontiguousarray(u.reshape(a * a, ocb, icb * ib, ob))


def winograd_weight_transform_compute(weight, m: int):
    """`winograd_weight_transform` as tensor expressions (for a weight transformed when the
    model is loaded rather than while compiling): U[e, ob_, c, o] = sum over the 3 x 3 taps
    (r, s) of G[e // a, r] * w[ob_, c // i, r, s, c % i, o] * G[e % a, s]."""
    ocb, icb, kh, kw, ib, ob = (int(d) for d in weight.shape)
    if (kh, kw) != (3, 3):
        raise IRError(f"winograd: a {kh}x{kw} kernel; only 3x3 has a transform")
    _, g, _ = winograd_matrices(m)
    a = m + 2
    r = te.reduce_axis((0, 3), name="r")
    s = te.reduce_axis((0, 3), name="s")

    def coeff(point, tap):
        return _by_index(point, [_by_index(tap, [te.const(float(g[p, t]), weight.dtype)
                                                 for t in range(3)]) for p in range(a)])

    return te.compute(
        (a * a, ocb, icb * ib, ob),
        lambda e, o, c, lane: te.sum(
            coeff(e // a, r.var) * weight[o, c // ib, r, s, c % ib, lane] * coeff(e % a, s.var),
            axis=[r, s]),
        name="winograd_weight", tag="winograd_weight_transform")


def _combination(coeffs: Sequence[float], values: Sequence):
    """sum(c * v) over the non-zero coefficients, +-1 as additions and subtractions."""
    total = None
    for c, v in zip(coeffs, values):
        if c == 0:
            continue
        if total is None:
            total = v if c == 1 else v * float(c)
        else:
            term = v if abs(c) == 1 else v * float(abs(c))
            total = total + term if c > 0 else total - term
    return total if total is not None else values[0] * 0.0


def _by_index(index, cases: Sequence):
    """cases[index] as a chain of selects (constant once `index` is)."""
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        out = te.select(index == k, cases[k], out)
    return out


def conv2d_winograd_NCHWc(data, weight, m: int, padding, out_dtype=None):
    """data [N, I/i, H, W, i] (float), weight U [a*a, O/o, I, o] (`winograd_weight_transform`)
    -> [N, O/o, OH, OW, o]: the 3 x 3, stride-1 convolution, `padding` (top, left, bottom,
    right)."""
    if data.ndim != 5 or weight.ndim != 4:
        raise IRError("conv2d_winograd_NCHWc: data must be 5-d (NCHW[x]c) and the weight 4-d "
                      f"([a*a, O/o, I, o]), got {data.ndim} and {weight.ndim} dims")
    at, _, bt = winograd_matrices(m)
    a = m + 2
    n, icb, h, w, ib = (int(d) for d in data.shape)
    points, ocb, ic, ob = (int(d) for d in weight.shape)
    if points != a * a or ic != icb * ib:
        raise IRError(f"conv2d_winograd_NCHWc: weight {[points, ocb, ic, ob]} does not match "
                      f"F({m}, 3) ({a * a} points) on {icb} x {ib} input channels")
    top, left, bottom, right = (int(p) for p in padding)
    oh, ow = h + top + bottom - 2, w + left + right - 2
    if oh < 1 or ow < 1:
        raise IRError(f"conv2d_winograd_NCHWc: a {h}x{w} input padded {padding} is smaller "
                      "than the 3x3 kernel")
    out_dtype = as_dtype(out_dtype or data.dtype)
    th, tw = -(-oh // m), -(-ow // m)
    tiles = n * th * tw
    padded = pad_op(data, (0, 0, top, left, 0),
                    (0, 0, th * m + 2 - h - top, tw * m + 2 - w - left, 0), name="pad")

    def tile_origin(p):
        b, rest = (0, p) if n == 1 else (p // (th * tw), p % (th * tw))
        return b, rest // tw * m, rest % tw * m

    # (Bt d B)[xi, nu] = sum_s Bt[nu, s] (sum_r Bt[xi, r] d[r, s]): the columns, then the rows
    def input_columns(xi, col, p, c):
        b, y0, x0 = tile_origin(p)
        d = [padded[b, c // ib, y0 + r, x0 + col, c % ib] for r in range(a)]
        return _by_index(xi, [_combination(bt[i], d) for i in range(a)])

    cols = te.compute((a, a, tiles, ic), input_columns, name="wino_columns",
                      tag="wino_columns")

    def transform_input(e, p, c):
        t = [cols[e // a, col, p, c] for col in range(a)]
        return _by_index(e % a, [_combination(bt[j], t) for j in range(a)])

    v = te.compute((a * a, tiles, ic), transform_input, name="wino_input", tag="wino_input")
    k = te.reduce_axis((0, ic), name="rc")
    mm = te.compute((a * a, ocb, tiles, ob),
                    lambda e, f, p, o: te.sum(v[e, p, k].astype(out_dtype)
                                              * weight[e, f, k, o].astype(out_dtype), axis=k),
                    name="wino_gemm", tag="wino_gemm")

    # Y[y, x] = sum_i At[y, i] (sum_j At[x, j] M[i, j]): the rows, then the columns
    def output_rows(b, f, ty, i, x, o):
        p = (b * th + ty) * tw + x // m
        t = [mm[i * a + j, f, p, o] for j in range(a)]
        return _by_index(x % m, [_combination(at[xi], t) for xi in range(m)])

    rows = te.compute((n, ocb, th, a, tw * m, ob), output_rows, name="wino_rows",
                      tag="wino_rows")

    def transform_output(b, f, y, x, o):
        t = [rows[b, f, y // m, i, x, o] for i in range(a)]
        return _by_index(y % m, [_combination(at[yi], t) for yi in range(m)])

    return te.compute((n, ocb, oh, ow, ob), transform_output, name="conv2d_winograd_NCHWc",
                      tag="conv2d_winograd_NCHWc")
