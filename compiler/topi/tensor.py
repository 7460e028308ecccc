"""Tensors filled with one value (tag ELEMWISE), as TVM's `topi.full` / `topi.full_like`, and the
contractions `topi.tensordot` and `topi.einsum`."""
from __future__ import annotations

from .. import te
from ..ir.dtype import as_dtype
from ..tir import expr as E
from . import tag


def full(shape, dtype, fill_value):
    """A tensor of `shape` and `dtype` whose every element is `fill_value`."""
    dtype = as_dtype(dtype)
    value = E.cast(dtype, E.convert(fill_value))
    return te.compute(tuple(shape), lambda *i: value, name="T_full", tag=tag.ELEMWISE)


def full_like(x, fill_value):
    """A tensor of the shape and dtype of `x` whose every element is `fill_value`."""
    value = E.cast(x.dtype, E.convert(fill_value))
    return te.compute(x.shape, lambda *i: value, name="T_full_like", tag=tag.ELEMWISE)


def tensordot(a, b, axes=2):
    """Sums the products of `a` and `b` over pairs of axes, as numpy.tensordot: `axes` an int N
    (the last N axes of `a` with the first N of `b`) or two lists of axes."""
    if isinstance(axes, int):
        a_axes = list(range(a.ndim - axes, a.ndim))
        b_axes = list(range(axes))
    else:
        a_axes, b_axes = [list(x) if isinstance(x, (list, tuple)) else [x] for x in axes]
    a_axes = [x % a.ndim for x in a_axes]
    b_axes = [x % b.ndim for x in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: {len(a_axes)} axes of a paired with {len(b_axes)} of b")
    a_free = [d for d in range(a.ndim) if d not in a_axes]
    b_free = [d for d in range(b.ndim) if d not in b_axes]
    ks = [te.reduce_axis((0, a.shape[d]), f"k{n}") for n, d in enumerate(a_axes)]
    shape = [a.shape[d] for d in a_free] + [b.shape[d] for d in b_free]

    def fcompute(*i):
        ai, bi = [None] * a.ndim, [None] * b.ndim
        for d, v in zip(a_free, i[:len(a_free)]):
            ai[d] = v
        for d, v in zip(b_free, i[len(a_free):]):
            bi[d] = v
        for k, da, db in zip(ks, a_axes, b_axes):
            ai[da], bi[db] = k.var, k.var
        product = a(*ai) * b(*bi)
        return te.sum(product, axis=ks) if ks else product

    return te.compute(tuple(shape), fcompute, name="T_tensordot")


def einsum(subscripts: str, *operands):
    """Einstein summation, as numpy.einsum, for subscripts of letters ("ij,jk->ik", "ii->i";
    without "->" the output takes the letters used once, in alphabetical order): the product of
    the operands summed over the letters absent from the output; a letter repeated within one
    operand reads its diagonal."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise ValueError(f"einsum: ellipsis ('...') is not supported in {subscripts!r}")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands, got "
                         f"{len(operands)}")
    extent = {}
    for term, x in zip(terms, operands):
        if len(term) != x.ndim:
            raise ValueError(f"einsum: term {term!r} for an operand of {x.ndim} dimensions")
        for letter, dim in zip(term, x.shape):
            extent.setdefault(letter, dim)
    if "->" not in spec:
        counts = {c: inputs.count(c) for c in extent}
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    summed = [c for c in extent if c not in output]
    ks = {c: te.reduce_axis((0, extent[c]), f"k_{c}") for c in summed}

    def fcompute(*i):
        value = {c: v for c, v in zip(output, i)}
        value.update({c: k.var for c, k in ks.items()})
        product = None
        for term, x in zip(terms, operands):
            load = x(*[value[c] for c in term])
            product = load if product is None else product * load
        return te.sum(product, axis=list(ks.values())) if ks else product

    return te.compute(tuple(extent[c] for c in output), fcompute, name="T_einsum")
