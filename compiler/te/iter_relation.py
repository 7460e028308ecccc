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
from typing import Dict, List, Optional, Union

from ..arith import covered_ranges, simplify
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
    return simplify(E.FloorDiv(simplify(a + b - 1), b))


def _fits(ext: E.PrimExpr, factor: E.PrimExpr) -> bool:
    """Whether a constant extent is at most a constant split factor."""
    return isinstance(ext, E.IntImm) and isinstance(factor, E.IntImm) \
        and ext.value <= factor.value


def pass_down(relations: List[Relation], dom: Dict[E.IterVar, E.Range]) -> None:
    """Fill `dom` for derived axes from the ranges of their parents (in relation order)."""
    zero = E.const(0)
    for r in relations:
        if isinstance(r, Split):
            ext = dom[r.parent].extent
            if r.factor is not None and _fits(ext, r.factor):
                # factor >= extent: one outer iteration, the inner loop is clamped (as TVM)
                dom[r.outer] = E.Range(zero, E.const(1, ext.dtype))
                dom[r.inner] = E.Range(zero, ext)
            elif r.factor is not None:
                dom[r.outer] = E.Range(zero, _ceildiv(ext, r.factor))
                dom[r.inner] = E.Range(zero, r.factor)
            else:
                dom[r.outer] = E.Range(zero, r.nparts)
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
            f = rng[r.fused]
            if not E.is_const_int(f.extent, 1):
                rng[r.outer] = E.Range(E.const(0), dom[r.outer].extent)
                rng[r.inner] = E.Range(E.const(0), dom[r.inner].extent)
            else:
                ext = _as_dtype(dom[r.inner].extent, f.min.dtype)
                rng[r.outer] = E.Range(_as_dtype(simplify(E.FloorDiv(f.min, ext)),
                                                 r.outer.var.dtype), E.const(1))
                rng[r.inner] = E.Range(_as_dtype(simplify(E.FloorMod(f.min, ext)),
                                                 r.inner.var.dtype), E.const(1))
    return rng


def _is_full(r: E.Range, full: E.Range) -> bool:
    if not E.is_const_int(r.min, 0):
        return False
    a, b = r.extent, full.extent
    return a is b or (isinstance(a, E.IntImm) and isinstance(b, E.IntImm) and a.value == b.value)
