"""Message passing over split and fuse relations (compiler/te/iter_relation.py): the extents
passed down from a parent, and the ranges of a fuse's parts passed up from a run of fused
values, checked against every value of the run."""
import itertools

import numpy as np
import pytest

from compiler import te, tir
from compiler.arith import simplify
from compiler.te.iter_relation import Fuse, Split, pass_down, pass_up_ranges


def _iv(name):
    return tir.IterVar(None, tir.Var(name))


def _ext(r):
    e = simplify(r.extent)
    assert isinstance(e, tir.IntImm), e
    return e.value


def _split(extent, factor=None, nparts=None, bound=(), threads=True):
    p, o, i = _iv("p"), _iv("o"), _iv("i")
    amount = tir.const(factor if factor is not None else nparts)
    rel = Split(p, o, i, amount if factor is not None else None,
                amount if nparts is not None else None)
    dom = {p: tir.Range(tir.const(0), tir.const(extent))}
    thread_bound = None if not threads else {o if b == "outer" else i for b in bound}
    pass_down([rel], dom, thread_bound)
    return _ext(dom[o]), _ext(dom[i])


@pytest.mark.parametrize("extent, factor, nparts, expected", [
    (8, 32, None, (1, 8)),     # the factor exceeds the extent: one iteration of 8
    (8, None, 32, (8, 1)),     # nparts exceeds the extent: 8 iterations of 1
    (64, 8, None, (8, 8)),
    (10, 4, None, (3, 4)),     # not divisible: the outer part rounds up
    (10, None, 4, (4, 3)),
])
def test_split_extents(extent, factor, nparts, expected):
    assert _split(extent, factor, nparts) == expected


def test_a_thread_bound_part_keeps_its_extent():
    assert _split(8, factor=32, bound=("inner",)) == (1, 32)
    assert _split(8, nparts=32, bound=("outer",)) == (32, 1)
    assert _split(8, factor=32, bound=("outer",)) == (1, 8)


def test_split_by_a_factor_of_a_symbolic_extent_is_exact():
    m = te.var("m")
    p, o, i = _iv("p"), _iv("o"), _iv("i")
    dom = {p: tir.Range(tir.const(0), 8 * m)}
    pass_down([Split(p, o, i, tir.const(8), None)], dom, set())
    assert dom[o].extent is m and _ext(dom[i]) == 8


def _fuse_up(rows, cols, start, count):
    outer, inner, fused = _iv("x"), _iv("y"), _iv("f")
    rel = Fuse(outer, inner, fused)
    dom = {outer: tir.Range(tir.const(0), tir.const(rows)),
           inner: tir.Range(tir.const(0), tir.const(cols))}
    pass_down([rel], dom)
    rng = pass_up_ranges([rel], dom, {fused: tir.Range(tir.const(start), tir.const(count))})
    o, i = rng[outer], rng[inner]
    return (simplify(o.min).value, _ext(o)), (simplify(i.min).value, _ext(i))


@pytest.mark.parametrize("cols, count", [(6, 1), (6, 2), (6, 3), (6, 4), (6, 6), (6, 12),
                                         (4, 8), (5, 3)])
def test_fuse_parts_cover_every_value_of_a_run(cols, count):
    rows = 5
    for start in range(0, rows * cols - count + 1):
        (o0, oe), (i0, ie) = _fuse_up(rows, cols, start, count)
        for f in range(start, start + count):
            assert o0 <= f // cols < o0 + oe and i0 <= f % cols < i0 + ie, (start, f)


@pytest.mark.parametrize("cols, count", [(6, 3), (6, 2), (8, 4), (6, 1)])
def test_an_aligned_run_in_one_row_is_exact(cols, count):
    for k in range(5 * cols // count):
        start = k * count
        assert _fuse_up(5, cols, start, count) == ((start // cols, 1), (start % cols, count))


def test_a_run_of_whole_rows_covers_them():
    assert _fuse_up(5, 4, 8, 8) == ((2, 2), (0, 4))


def test_split_then_fuse_up_from_a_fixed_outer_loop():
    """(x*16 + y) split by 8, the outer loop fixed: half a row."""
    x, y, f, fo, fi = (_iv(n) for n in ("x", "y", "f", "fo", "fi"))
    rels = [Fuse(x, y, f), Split(f, fo, fi, tir.const(8), None)]
    dom = {x: tir.Range(tir.const(0), tir.const(32)), y: tir.Range(tir.const(0), tir.const(16))}
    pass_down(rels, dom, set())
    for k in range(64):
        leaf = {fo: tir.Range(tir.const(k), tir.const(1)),
                fi: tir.Range(tir.const(0), tir.const(8))}
        rng = pass_up_ranges(rels, dom, leaf)
        assert (simplify(rng[x].min).value, _ext(rng[x])) == (k // 2, 1)
        assert (simplify(rng[y].min).value, _ext(rng[y])) == (k % 2 * 8, 8)


@pytest.mark.parametrize("n, m, factor", list(itertools.product((4, 6), (4, 6), (2, 3, 4))))
def test_fused_and_split_compute_at_regions(run, rng, n, m, factor):
    """B computed at the outer part of C's fused-and-split loop: one row, `factor` wide, when
    the factor divides the row; the rows touched otherwise. Either way the result is right."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(s[C].fuse(*C.op.axis), factor)
    s[B].compute_at(s[C], xo)
    bounds = te.schedule.InferBound(s)
    if m % factor == 0:
        assert _ext(bounds[B.op.axis[0]]) == 1 and _ext(bounds[B.op.axis[1]]) == factor
    else:
        assert _ext(bounds[B.op.axis[1]]) == m
    a, c = rng.random((n, m), dtype="float32"), np.zeros((n, m), "float32")
    run(s, [A, C], [a, c])
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
