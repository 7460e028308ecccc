"""Data layouts as strings and the transform between two of them (TVM's layout notation).

A layout names each axis: an upper-case letter is a primal axis (N, C, H, W, O, I), a
lower-case letter preceded by a number is a block of the primal axis of that letter
("NCHW8c": channels in blocks of 8, the block innermost; "OIHW8i8o"). A primal axis of extent
E with a block b has extent E / b; the element at primal index k is at [k / b, ..., k % b].

    parse_layout("NCHW8c")           # [("N", 0), ("C", 0), ("H", 0), ("W", 0), ("c", 8)]
    transform_shape((1, 64, 56, 56), "NCHW", "NCHW8c")    # (1, 8, 56, 56, 8)
    transform_numpy(x, "NCHW", "NCHW8c")                  # the array in the new layout
    layout_transform(tensor, "OIHW", "OIHW8i8o")          # the same as a te compute
"""
from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

import numpy as np

from ... import te
from ...ir.errors import IRError

_AXIS = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(layout: str) -> List[Tuple[str, int]]:
    """The axes of `layout`, outermost first: (letter, block) with block 0 for a primal axis."""
    axes, pos = [], 0
    for m in _AXIS.finditer(layout):
        if m.start() != pos:
            break
        pos = m.end()
        num, letter = m.group(1), m.group(2)
        if letter.isupper() == bool(num):
            raise IRError(f"layout {layout!r}: a block axis is a number then a lower-case letter "
                          f"(8c), a primal axis one upper-case letter; got {m.group(0)!r}")
        axes.append((letter, int(num) if num else 0))
    letters = [a for a, _ in axes]
    if pos != len(layout) or not axes or len(set(letters)) != len(letters):
        raise IRError(f"layout {layout!r} is not a sequence of distinct axes such as NCHW8c")
    for a, _ in axes:
        if a.islower() and a.upper() not in letters:
            raise IRError(f"layout {layout!r}: block axis {a!r} has no primal axis {a.upper()!r}")
    return axes


def _check_pair(src, dst, s: str, d: str):
    if sorted(a.upper() for a, b in src if not b) != sorted(a.upper() for a, b in dst if not b):
        raise IRError(f"layout_transform: {s!r} and {d!r} do not have the same primal axes")


def _primal_extents(shape: Sequence, axes) -> Dict[str, int]:
    if len(shape) != len(axes):
        raise IRError(f"layout of {len(axes)} axes for a shape of {len(shape)} dims "
                      f"{tuple(shape)}")
    ext = {}
    for (a, b), n in zip(axes, shape):
        if not b:
            ext[a] = ext.get(a, 1) * n
    for (a, b), n in zip(axes, shape):
        if b:
            if n != b:
                raise IRError(f"axis {b}{a} has extent {n}, not {b}")
            ext[a.upper()] *= b
    return ext


def _block(axes, letter: str) -> int:
    return next((b for a, b in axes if a == letter.lower() and b), 1)


def transform_shape(shape: Sequence[int], src: str, dst: str) -> tuple:
    """`shape` (in layout `src`) in layout `dst`; IRError when a block does not divide."""
    sa, da = parse_layout(src), parse_layout(dst)
    _check_pair(sa, da, src, dst)
    ext = _primal_extents(tuple(shape), sa)
    out = []
    for a, b in da:
        if b:
            out.append(b)
            continue
        blk = _block(da, a)
        if ext[a] % blk:
            raise IRError(f"layout_transform {src} -> {dst}: block {blk} does not divide axis "
                          f"{a} of extent {ext[a]}")
        out.append(ext[a] // blk)
    return tuple(out)


def transform_numpy(x, src: str, dst: str):
    """The numpy array `x` (layout `src`) in layout `dst`."""
    sa, da = parse_layout(src), parse_layout(dst)
    _check_pair(sa, da, src, dst)
    ext = _primal_extents(x.shape, sa)
    # to the primal order of src (each primal axis whole), then split and permute for dst
    primal = [a for a, b in sa if not b]
    order, shape = [], []
    for a in primal:
        i = sa.index((a, 0))
        order.append(i)
        blk = [i for i, (b, n) in enumerate(sa) if b == a.lower() and n]
        order += blk
    y = np.transpose(x, order).reshape([ext[a] for a in primal])
    for a in primal:
        blk = _block(da, a)
        shape += [ext[a] // blk, blk]
    y = y.reshape(shape)
    pos = {}
    for k, a in enumerate(primal):
        pos[a] = 2 * k
        pos[a.lower()] = 2 * k + 1
    perm = [pos[a] for a, _ in da]
    keep = set(perm)
    dropped = [i for i in range(len(shape)) if i not in keep]  # blocks of 1
    y = np.transpose(y, perm + dropped).reshape(transform_shape(x.shape, src, dst))
    return np.ascontiguousarray(y)


def layout_transform(data, src: str, dst: str, name: str = "T_layout_trans"):
    """`data` (layout `src`) in layout `dst` as a te compute (tag "injective,layout_transform")."""
    sa, da = parse_layout(src), parse_layout(dst)
    shape = tuple(int(s) for s in data.shape)
    out_shape = transform_shape(shape, src, dst)

    def f(*idx):
        full: Dict[str, object] = {}
        for (a, b), i in zip(da, idx):
            if not b:
                blk = _block(da, a)
                full[a] = i * blk if blk > 1 else i
        for (a, b), i in zip(da, idx):
            if b:
                full[a.upper()] = full[a.upper()] + i
        src_idx = []
        for a, b in sa:
            if b:
                src_idx.append(te.floormod(full[a.upper()], b))
            else:
                blk = _block(sa, a)
                src_idx.append(te.floordiv(full[a], blk) if blk > 1 else full[a])
        return data(*src_idx)

    return te.compute(out_shape, f, name=name, tag="injective,layout_transform")
