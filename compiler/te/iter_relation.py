"""How a stage's leaf loops derive from its root axes: Split and Fuse relations, and the two
directions of message passing over them.

Convention: a root axis ranges over [min, min + extent) (min from bound inference); every derived
axis (split outer/inner, fused, rebased, singleton) starts at 0. `pass_down` gives derived ranges
from root ranges; `pass_up_values` gives root values from leaf loop values.

Rebase (made by `Schedule.normalize`) is the identity on these relative values: a root's min is
added once, where its value is used. Singleton (`fuse()` of no axes) is a unit loop that no root
depends on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Union

from ..arith import can_prove, covered_ranges, simplify
from ..tir import expr as E


@dataclass(eq=False)
class Split:
    parent: E.IterVar
    outer: E.IterVar
    inner: E.IterVar
    factor: Optional[E.PrimExpr]
    nparts: Optional[E.PrimExpr]


@dataclass(eq=False)
class Fuse:
    outer: E.IterVar
    inner: E.IterVar
    fused: E.IterVar


@dataclass(eq=False)
class Rebase:
    parent: E.IterVar
    rebased: E.IterVar


@dataclass(eq=False)
class Singleton:
    iter: E.IterVar


Relation = Union[Split, Fuse, Rebase, Singleton]


def _as_dtype(e: E.PrimExpr, dtype) -> E.PrimExpr:
    if str(e.dtype) == str(dtype):
        return e
    if isinstance(e, E.IntImm):
        return E.const(e.value, dtype)
    return E.cast(dtype, e)


def _ceildiv(a, b):
    if _divides(b, a):  # exact: the factor divides the extent
        return simplify(E.binary(E.FloorDiv, a, b))
    return simplify(E.FloorDiv(simplify(a + b - 1), b))


def _divides(b, a) -> bool:
    """Whether `b` provably divides `a`."""
    return can_prove(E.binary(E.EQ, E.binary(E.FloorMod, a, b), 0))


def _fits(ext: E.PrimExpr, factor: E.PrimExpr) -> bool:
    """Whether a constant extent is at most a constant split factor."""
    return isinstance(ext, E.IntImm) and isinstance(factor, E.IntImm) \
        and ext.value <= factor.value


def _derives_thread(relations: List[Relation], bound: Set[E.IterVar]) -> Set[E.IterVar]:
    """The axes from which at least one leaf bound to a thread derives (the bound leaves
    included)."""
    out = set(bound)
    for r in reversed(relations):
        if isinstance(r, Split) and (r.outer in out or r.inner in out):
            out.add(r.parent)
        elif isinstance(r, Fuse) and r.fused in out:
            out.update((r.outer, r.inner))
        elif isinstance(r, Rebase) and r.rebased in out:
            out.add(r.parent)
    return out


def derived_from(relations: List[Relation], roots) -> Set[E.IterVar]:
    """The axes that derive from at least one of `roots` (the roots included): a fused axis
    derives from both of its operands."""
    out = set(roots)
    for r in relations:
        if isinstance(r, Split) and r.parent in out:
            out.update((r.outer, r.inner))
        elif isinstance(r, Fuse) and (r.outer in out or r.inner in out):
            out.add(r.fused)
        elif isinstance(r, Rebase) and r.parent in out:
            out.add(r.rebased)
    return out


def pass_down(relations: List[Relation], dom: Dict[E.IterVar, E.Range],
              thread_bound: Optional[Set[E.IterVar]] = None) -> None:
    """Fill `dom` for derived axes from the ranges of their parents (in relation order).

    A split's part of extent `factor` (or `nparts`) is its parent's extent instead when that
    is provably smaller (split(8, factor=32): one outer iteration of 8; split(8, nparts=32):
    8 outer iterations of 1), as TVM's bound inference, which passes `thread_bound` (the
    leaves bound to thread axes): a part from which a thread-bound leaf derives keeps its
    extent, the number of threads launched. Without `thread_bound` (schedule primitives that
    need extents before scheduling ends) only a constant factor at least a constant extent is
    clamped. The other part's extent is exact when the factor divides the extent."""
    zero = E.const(0)
    threads = None if thread_bound is None else _derives_thread(relations, thread_bound)

    def clamp(part, ext, amount):
        if threads is None or part in threads or E.is_const_int(ext, 0):
            return amount
        return ext if can_prove(ext < amount) else amount

    for r in relations:
        if isinstance(r, Split):
            ext = dom[r.parent].extent
            if r.factor is not None and threads is None and _fits(ext, r.factor):
                dom[r.outer] = E.Range(zero, E.const(1, ext.dtype))
                dom[r.inner] = E.Range(zero, ext)
            elif r.factor is not None:
                dom[r.outer] = E.Range(zero, _ceildiv(ext, r.factor))
                dom[r.inner] = E.Range(zero, clamp(r.inner, ext, r.factor))
            else:
                dom[r.outer] = E.Range(zero, clamp(r.outer, ext, r.nparts))
                dom[r.inner] = E.Range(zero, _ceildiv(ext, r.nparts))
        elif isinstance(r, Fuse):
            dt = r.fused.var.dtype
            dom[r.fused] = E.Range(zero, simplify(_as_dtype(dom[r.outer].extent, dt) *
                                                  _as_dtype(dom[r.inner].extent, dt)))
        elif isinstance(r, Rebase):
            dom[r.rebased] = E.Range(zero, dom[r.parent].extent)
        else:
            dom[r.iter] = E.Range(zero, E.const(1, r.iter.var.dtype))


def split_factor(r: Split, dom: Dict[E.IterVar, E.Range]) -> E.PrimExpr:
    return r.factor if r.factor is not None else dom[r.inner].extent


def pass_up_values(relations: List[Relation], dom: Dict[E.IterVar, E.Range],
                   values: Dict[E.IterVar, E.PrimExpr]) -> None:
    """Given `values` of the leaf axes (loop variables or constants), fill the values of every
    axis above them, up to the roots. A root's value includes its range's min."""
    for r in reversed(relations):
        if isinstance(r, Split):
            v = values[r.outer] * split_factor(r, dom) + values[r.inner]
            values[r.parent] = simplify(v)
        elif isinstance(r, Rebase):
            values[r.parent] = values[r.rebased]
        elif isinstance(r, Fuse):
            # a fused axis has the wider dtype of its parts (an int64 symbolic axis fused with
            # an int32 one); each part's value is cast back to its own
            fused = values[r.fused]
            ext = _as_dtype(dom[r.inner].extent, fused.dtype)
            values[r.outer] = _as_dtype(simplify(E.FloorDiv(fused, ext)), r.outer.var.dtype)
            values[r.inner] = _as_dtype(simplify(E.FloorMod(fused, ext)), r.inner.var.dtype)


def pass_up_ranges(relations: List[Relation], dom: Dict[E.IterVar, E.Range],
                   leaf: Dict[E.IterVar, E.Range]) -> Dict[E.IterVar, E.Range]:
    """Ranges of every axis from ranges of the leaves (a leaf fixed to a point has extent 1).
    Offsets are relative: a root's result must still be shifted by its own min."""

    rng = dict(leaf)
    for r in reversed(relations):
        if isinstance(r, Split):
            o, i = rng[r.outer], rng[r.inner]
            full_o, full_i = _is_full(o, dom[r.outer]), _is_full(i, dom[r.inner])
            if full_o and full_i:
                rng[r.parent] = E.Range(E.const(0), dom[r.parent].extent)
            else:
                vo, vi = E.Var("o"), E.Var("i")
                rng[r.parent] = covered_ranges([vo * split_factor(r, dom) + vi],
                                            {vo: o, vi: i})[0] or \
                    E.Range(E.const(0), dom[r.parent].extent)
        elif isinstance(r, Rebase):
            rng[r.parent] = rng[r.rebased]
        elif isinstance(r, Fuse):
            rng[r.outer], rng[r.inner] = _fuse_up(r, dom, rng[r.fused])
    return rng


def _fuse_up(r: Fuse, dom: Dict[E.IterVar, E.Range], f: E.Range):
    """Ranges of a fuse's outer and inner axes when the fused axis covers `f`, as TVM's
    message passing: a point gives points; a run of `E` values starting at a multiple of `E`
    that divides the inner extent stays in one row (outer 1, inner `E`); a run of whole rows
    covers them (inner full); otherwise the rows the run touches, each whole."""
    full_outer = E.Range(E.const(0), dom[r.outer].extent)
    full_inner = E.Range(E.const(0), dom[r.inner].extent)
    if _is_full(f, dom[r.fused]):
        return full_outer, full_inner
    dt = f.min.dtype
    ie = _as_dtype(dom[r.inner].extent, dt)
    ext = _as_dtype(f.extent, dt)

    def out(e, iv):
        return _as_dtype(simplify(e), iv.var.dtype)

    one = E.const(1, r.outer.var.dtype)
    row = out(E.FloorDiv(f.min, ie), r.outer)
    if E.is_const_int(f.extent, 1):
        return E.Range(row, one), E.Range(out(E.FloorMod(f.min, ie), r.inner),
                                          E.const(1, r.inner.var.dtype))
    if _divides(ext, ie) and _divides(ext, f.min):
        return E.Range(row, one), E.Range(out(E.FloorMod(f.min, ie), r.inner),
                                          _as_dtype(f.extent, r.inner.var.dtype))
    if _divides(ie, ext) and _divides(ie, f.min):
        return E.Range(row, out(E.FloorDiv(ext, ie), r.outer)), full_inner
    last = E.FloorDiv(f.min + ext - 1, ie)
    return E.Range(row, out(last - E.FloorDiv(f.min, ie) + 1, r.outer)), full_inner


def _is_full(r: E.Range, full: E.Range) -> bool:
    if not E.is_const_int(r.min, 0):
        return False
    a, b = r.extent, full.extent
    return a is b or (isinstance(a, E.IntImm) and isinstance(b, E.IntImm) and a.value == b.value)
