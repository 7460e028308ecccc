"""Einsum, as sums, transposes, reshapes and batched matrix products: letters of one operand
that nothing else needs are summed away, then the operands are contracted pairwise, left to
right (batch letters, the letters of each side, the contracted letters as one (B, L, K) x
(B, K, R) matmul), and the result is transposed to the output's order. The equation may use
an ellipsis and may leave out "->" (the output is then the letters used once, in alphabetical
order, after the ellipsis dims). A letter repeated within one operand takes the diagonal.
Shapes must be static."""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from ...relax import op as R
from .common import const, converter

# letters standing for the dims an ellipsis covers (not valid in an equation)
_ELLIPSIS_LETTERS = "0123456789"


def _parse(ctx, equation: str, ranks: List[int]) -> Tuple[List[str], str]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ctx.error(f"equation {equation!r} has {len(terms)} operands, the node "
                        f"{len(ranks)} inputs")
    n_ell = max((r - (len(t) - 3) for t, r in zip(terms, ranks) if "..." in t), default=0)
    if n_ell > len(_ELLIPSIS_LETTERS):
        raise ctx.unsupported(f"an ellipsis of {n_ell} dims")
    out = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            k = r - (len(t) - 3)
            t = t.replace("...", _ELLIPSIS_LETTERS[n_ell - k:n_ell])
        if len(t) != r or not all(c.isalpha() or c in _ELLIPSIS_LETTERS for c in t):
            raise ctx.error(f"operand term {t!r} of {equation!r} does not fit an input of "
                            f"rank {r}")
        out.append(t)
    ell = _ELLIPSIS_LETTERS[:n_ell]
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        letters = "".join(out)
        rhs = ell + "".join(sorted(c for c in set(letters) if c.isalpha() and
                                   letters.count(c) == 1))
    return out, rhs


def _permute(x, term: str, order: str):
    if term == order:
        return x
    return R.permute_dims(x, [term.index(c) for c in order])


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _diagonal(x, term: str, shape):
    """(x, term) with each letter once: a letter repeated within the term takes the diagonal
    of its dims (one take by known flat positions)."""
    letters = "".join(dict.fromkeys(term))
    if letters == term:
        return x, term
    size = {c: d for c, d in zip(term, shape)}
    grids = np.indices(tuple(size[c] for c in letters), dtype="int64")
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    flat = sum(grids[letters.index(c)] * strides[i] for i, c in enumerate(term))
    return R.take(R.reshape(x, (_prod(shape),)), const(flat, "int64"), 0), letters


@converter("Einsum")
def _einsum(ctx):
    n = ctx.num_inputs
    shapes = [ctx.static_shape(i, "Einsum") for i in range(n)]
    terms, out_term = _parse(ctx, str(ctx.attr("equation", "")), [len(s) for s in shapes])
    sizes = {}
    for t, s in zip(terms, shapes):
        for c, d in zip(t, s):
            if sizes.setdefault(c, d) != d:
                raise ctx.unsupported(f"letter {c!r} with sizes {sizes[c]} and {d} "
                                      "(broadcasting)")
    ops = [_diagonal(ctx.input(i), t, shapes[i]) for i, t in enumerate(terms)]

    def needed(k):      # letters the output or the operands after k need
        return set(out_term).union(*[set(t) for _, t in ops[k + 1:]])

    def reduce_unused(x, term, keep):
        axes = [i for i, c in enumerate(term) if c not in keep]
        if not axes:
            return x, term
        return R.sum(x, axes, False), "".join(c for c in term if c in keep)

    x, term = reduce_unused(*ops[0], needed(0))
    for k in range(1, n):
        keep = needed(k)
        y, yterm = reduce_unused(*ops[k], keep | set(term))
        x, term = reduce_unused(x, term, keep | set(yterm))
        batch = "".join(c for c in term if c in yterm and c in keep)
        contract = "".join(c for c in term if c in yterm and c not in keep)
        left = "".join(c for c in term if c not in yterm)
        right = "".join(c for c in yterm if c not in term)
        b, l_, k_, r = (_prod([sizes[c] for c in g]) for g in (batch, left, contract, right))
        a3 = R.reshape(_permute(x, term, batch + left + contract), (b, l_, k_))
        b3 = R.reshape(_permute(y, yterm, batch + contract + right), (b, k_, r))
        term = batch + left + right
        x = R.reshape(R.matmul(a3, b3), tuple(sizes[c] for c in term))
    x, term = reduce_unused(x, term, set(out_term))
    if sorted(term) != sorted(out_term):
        raise ctx.error(f"output letters {out_term!r} are not among the operands' letters")
    return _permute(x, term, out_term)
