"""nn.flatten: [N, d1, d2, ...] -> [N, d1 * d2 * ...] (tag INJECTIVE)."""
from __future__ import annotations

from ... import te
from .. import tag as _tag
from ..utils import simplify


def flatten(data):
    rest = data.shape[1:]
    size = 1
    for d in rest:
        size = size * d

    def f(b, j):
        idx, r = [], j
        for d in reversed(rest):
            idx.append(te.floormod(r, d))
            r = te.floordiv(r, d)
        return data(b, *reversed(idx))

    return te.compute((data.shape[0], simplify(size)), f, name="T_flatten", tag=_tag.INJECTIVE)
