"""Arithmetic on shape dims for struct-info inference: a dim is a Python int or a symbolic
PrimExpr (int64); results are simplified and become ints again when they are constants."""
from __future__ import annotations

from typing import Iterable, Optional, Sequence, Tuple

from ..arith import Analyzer, simplify
from ..ir.structural_equal import structural_equal
from ..tir import expr as E
from .struct_info import Dim


def dim_expr(d: Dim) -> E.PrimExpr:
    return E.const(d, "int64") if isinstance(d, int) else d


def norm(e) -> Dim:
    """A simplified dim; an int when constant."""
    if isinstance(e, int):
        return e
    s = simplify(e)
    if isinstance(s, E.IntImm):
        return int(s.value)
    return s


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return norm(dim_expr(a) + dim_expr(b))


def sub(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return norm(dim_expr(a) - dim_expr(b))


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return norm(dim_expr(a) * dim_expr(b))


def floordiv(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return norm(dim_expr(a) // dim_expr(b))


def ceildiv(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return norm((dim_expr(a) + dim_expr(b) - 1) // dim_expr(b))


def product(dims: Iterable[Dim]) -> Dim:
    out: Dim = 1
    for d in dims:
        out = mul(out, d)
    return out


def equal(a: Dim, b: Dim) -> bool:
    """Whether two dims are provably equal."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if structural_equal(a, b):
        return True
    return Analyzer().can_prove_equal(dim_expr(a), dim_expr(b))


def known_unequal(a: Dim, b: Dim) -> bool:
    """Whether two dims are provably different (both static and different)."""
    return isinstance(a, int) and isinstance(b, int) and a != b


def broadcast(a: Sequence[Dim], b: Sequence[Dim]) -> Tuple[Optional[Tuple[Dim, ...]], int]:
    """numpy broadcasting of two shapes: (shape, -1) when every output dim is known, (None, i)
    when output dim i cannot be decided (two different symbolic dims), raising ValueError(i)
    when dims `i` (counted from the end, 1-based) are static and incompatible."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if isinstance(x, int) and x == 1:
            out.append(y)
        elif isinstance(y, int) and y == 1:
            out.append(x)
        elif equal(x, y):
            out.append(x)
        elif known_unequal(x, y):
            raise ValueError(i)
        else:
            return None, i
    return tuple(reversed(out)), -1


def normalize_axis(axis: int, ndim: int) -> Optional[int]:
    """`axis` in [0, ndim), or None when out of range."""
    a = axis + ndim if axis < 0 else axis
    return a if 0 <= a < ndim else None


def dim_str(d: Dim) -> str:
    return str(d) if isinstance(d, int) else getattr(d, "name", None) or str(d)


def bind_shapes_message(params) -> Optional[str]:
    """For graph-executor builds: None when every tensor parameter of `params` has a static
    shape, else a message naming those with symbolic dims and how to bind them."""
    dynamic = [p for p in params if getattr(p.struct_info, "shape", None) is not None
               and not all(isinstance(d, int) for d in p.struct_info.shape)]
    if not dynamic:
        return None
    shapes = ", ".join(f"{p.name_hint!r} has shape ({_dims(p, dim_str)})" for p in dynamic)
    example = ", ".join(f"{p.name_hint!r}: ({_dims(p, _one)})" for p in dynamic)
    return (f"graph executor: input {shapes}: the graph executor needs every dim static; bind "
            f"the symbolic dims when importing, e.g. from_onnx(model, shape={{{example}}}) (or "
            "match_cast them to static shapes), or build for the VM with relax.build")


def _one(d: Dim) -> str:
    return str(d) if isinstance(d, int) else "1"


def _dims(p, fmt) -> str:
    dims = [fmt(d) for d in p.struct_info.shape]
    return ", ".join(dims) + ("," if len(dims) == 1 else "")
