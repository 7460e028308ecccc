"""Helpers shared by the operators and schedules: constant shapes, axis normalisation, the
traversal that inlines injective stages around an anchor operation."""
from __future__ import annotations

from typing import Callable, List, Sequence

from ..arith import simplify as _simplify
from ..ir.errors import IRError
from ..te.tensor import ComputeOp, Operation, Tensor
from ..tir import expr as E
from . import tag


def simplify(e):
    return _simplify(E.convert(e))


def get_const_int(e, what: str = "value") -> int:
    """`e` as a Python int; IRError if it is not a constant."""
    if isinstance(e, int):
        return e
    e = simplify(e)
    if not isinstance(e, E.IntImm):
        raise IRError(f"{what} must be a constant, got {e}; this operator needs static sizes")
    return int(e.value)


def get_const_tuple(shape, what: str = "shape") -> tuple:
    """A shape of constants as a tuple of ints; symbolic entries stay expressions."""
    out = []
    for s in shape:
        if isinstance(s, int):
            out.append(s)
            continue
        s = simplify(s)
        out.append(int(s.value) if isinstance(s, E.IntImm) else s)
    return tuple(out)


def is_const(e) -> bool:
    return isinstance(e, int) or isinstance(simplify(e), E.IntImm)


def normalize_axis(axis: int, ndim: int, what: str) -> int:
    """`axis` in [0, ndim), a negative one counting from the end; IRError when out of range."""
    if not -ndim <= axis < ndim:
        raise IRError(f"{what}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim: int, what: str) -> List[int]:
    """None (every axis), an int or a sequence of ints, as sorted distinct axes in [0, ndim)."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = sorted({normalize_axis(int(a), ndim, what) for a in axes})
    if len(out) != len(axes):
        raise IRError(f"{what}: axis {axis} names an axis twice")
    return out


def divisor_at_most(extent: int, limit: int) -> int:
    """The largest divisor of `extent` not above `limit` (1 when extent < 1)."""
    for d in range(min(limit, extent), 0, -1):
        if extent % d == 0:
            return d
    return 1


def as_outputs(outs) -> List[Tensor]:
    """`outs` (a Tensor or a list of them) as a list."""
    return [outs] if isinstance(outs, Tensor) else list(outs)


def traverse_inline(s, final_op: Operation, callback: Callable[[Operation], None]) -> None:
    """Walk the operations that `final_op` reads, outputs first: every injective compute that
    is not an output of `s` is inlined; `callback(op)` runs on each compute op visited (the
    anchor among them), after its producers."""
    visited = set()
    outputs = {id(o) for o in s.outputs}

    def visit(op):
        if id(op) in visited or not isinstance(op, ComputeOp):
            return
        visited.add(id(op))
        if tag.is_injective(op.tag):
            if id(op) not in outputs:
                s[op].compute_inline()
            for t in op.input_tensors:
                visit(t.op)
        callback(op)

    visit(final_op)


def find_anchor(outs: Sequence[Tensor], accept: Callable[[str], bool]):
    """The first op reachable from `outs` through injective ops whose tag `accept`s, or None."""
    seen = set()
    todo = [t.op for t in outs]
    while todo:
        op = todo.pop(0)
        if id(op) in seen or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        if accept(op.tag):
            return op
        if tag.is_injective(op.tag):
            todo.extend(t.op for t in op.input_tensors)
    return None


def mac_count(op: ComputeOp) -> int:
    """The multiply-adds (points of the output times points of the reduction) of a compute op of
    static shape."""
    total = 1
    for d in get_const_tuple(op.output(0).shape):
        total *= d
    for r in op.reduce_axis:
        total *= get_const_tuple((r.dom.extent,))[0]
    return total

