"""Questions about struct info: the least common ancestor of two (what an If returns), the
symbolic dims a struct info mentions, and the return struct info of a call to a function whose
signature has symbolic dims (bound from the arguments, then substituted)."""
from __future__ import annotations

from typing import Dict, List, Optional

from ..ir.structural_equal import structural_equal
from ..tir import expr as E
from ..tir.functor import collect_vars, substitute
from . import shape_util
from .struct_info import (
    Dim,
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def _dims_lca(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    if all(shape_util.equal(x, y) for x, y in zip(a, b)):
        return a
    return None


def lca(a: StructInfo, b: StructInfo) -> StructInfo:
    """The most specific struct info both `a` and `b` satisfy."""
    if structural_equal(a, b):
        return a
    if isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else "void"
        ndim = a.ndim if a.ndim == b.ndim else -1
        return TensorStructInfo(_dims_lca(a.shape, b.shape), dtype, ndim)
    if isinstance(a, ShapeStructInfo) and isinstance(b, ShapeStructInfo):
        ndim = a.ndim if a.ndim == b.ndim else -1
        return ShapeStructInfo(_dims_lca(a.values, b.values), ndim)
    if isinstance(a, PrimStructInfo) and isinstance(b, PrimStructInfo) and a.dtype == b.dtype:
        return PrimStructInfo(a.dtype)
    if isinstance(a, TupleStructInfo) and isinstance(b, TupleStructInfo) \
            and len(a.fields) == len(b.fields):
        return TupleStructInfo([lca(x, y) for x, y in zip(a.fields, b.fields)])
    if isinstance(a, FuncStructInfo) and isinstance(b, FuncStructInfo):
        return FuncStructInfo.opaque_func(purity=a.purity and b.purity)
    return ObjectStructInfo()


def _dims_of(s: StructInfo) -> List[Dim]:
    if isinstance(s, TensorStructInfo):
        return list(s.shape or ())
    if isinstance(s, ShapeStructInfo):
        return list(s.values or ())
    if isinstance(s, PrimStructInfo):
        return [s.value] if isinstance(s.value, E.PrimExpr) else []
    if isinstance(s, TupleStructInfo):
        return [d for f in s.fields for d in _dims_of(f)]
    if isinstance(s, FuncStructInfo):
        out = [d for p in (s.params or ()) for d in _dims_of(p)]
        return out + _dims_of(s.ret)
    return []


def symbolic_vars(s: StructInfo) -> List[E.Var]:
    """The loop-IR variables `s` mentions, in first-use order."""
    seen: Dict[int, E.Var] = {}
    for d in _dims_of(s):
        if isinstance(d, E.PrimExpr):
            for v in collect_vars(d):
                seen.setdefault(id(v), v)
    return list(seen.values())


def bind_symbolic(param: StructInfo, arg: StructInfo, out: Dict[E.Var, Dim]) -> None:
    """Records the value each bare symbolic dim of `param` takes in `arg` (where they line up)."""
    if isinstance(param, TensorStructInfo) and isinstance(arg, TensorStructInfo):
        pairs = zip(param.shape or (), arg.shape or ()) if param.ndim == arg.ndim else ()
    elif isinstance(param, ShapeStructInfo) and isinstance(arg, ShapeStructInfo):
        pairs = zip(param.values or (), arg.values or ()) if param.ndim == arg.ndim else ()
    elif isinstance(param, TupleStructInfo) and isinstance(arg, TupleStructInfo):
        for p, a in zip(param.fields, arg.fields):
            bind_symbolic(p, a, out)
        return
    else:
        return
    for p, a in pairs:
        if isinstance(p, E.Var) and p not in out:
            out[p] = a
    return


def substitute_sinfo(s: StructInfo, vmap: Dict[E.Var, Dim]) -> StructInfo:
    """`s` with symbolic dims replaced by their values in `vmap` (simplified)."""
    if not vmap:
        return s
    emap = {k: shape_util.dim_expr(v) for k, v in vmap.items()}

    def dims(ds):
        if ds is None:
            return None
        return tuple(d if isinstance(d, int) else shape_util.norm(substitute(d, emap))
                     for d in ds)

    if isinstance(s, TensorStructInfo):
        return TensorStructInfo(dims(s.shape), s.dtype, s.ndim)
    if isinstance(s, ShapeStructInfo):
        return ShapeStructInfo(dims(s.values), s.ndim)
    if isinstance(s, PrimStructInfo) and isinstance(s.value, E.PrimExpr):
        return PrimStructInfo(s.dtype, shape_util.norm(substitute(s.value, emap)))
    if isinstance(s, TupleStructInfo):
        return TupleStructInfo([substitute_sinfo(f, vmap) for f in s.fields])
    return s


def call_ret(func: FuncStructInfo, args_sinfo: List[StructInfo]) -> StructInfo:
    """What calling a function of struct info `func` with these arguments returns."""
    if func.params is None:
        return func.ret
    vmap: Dict[E.Var, Dim] = {}
    for p, a in zip(func.params, args_sinfo):
        bind_symbolic(p, a, vmap)
    return substitute_sinfo(func.ret, vmap)


def tensor_or_none(s: StructInfo) -> Optional[TensorStructInfo]:
    return s if isinstance(s, TensorStructInfo) else None
