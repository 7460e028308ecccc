"""Struct-info shorthands with TVMScript's names, what the printer writes:

    from compiler.relax import script as R
    x = relax.Var("x", R.Tensor((n, 3, 224, 224), "float32"))

R.Tensor(shape, dtype, ndim), R.Tuple(*fields), R.Shape(values, ndim), R.Prim(dtype, value),
R.Object(), R.Callable(params, ret, purity).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def Tensor(shape: Optional[Sequence[Any]] = None, dtype: str = "float32",  # noqa: N802
           ndim: int = -1) -> TensorStructInfo:
    return TensorStructInfo(None if shape is None else tuple(shape), dtype, ndim)


def Tuple(*fields: StructInfo) -> TupleStructInfo:  # noqa: N802
    if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
        fields = tuple(fields[0])
    return TupleStructInfo(fields)


def Shape(values: Optional[Sequence[Any]] = None, ndim: int = -1) -> ShapeStructInfo:  # noqa: N802
    return ShapeStructInfo(None if values is None else tuple(values), ndim)


def Prim(dtype: str = "int64", value: Any = None) -> PrimStructInfo:  # noqa: N802
    return PrimStructInfo(dtype, value)


def Object() -> ObjectStructInfo:  # noqa: N802
    return ObjectStructInfo()


def Callable(params: Optional[Sequence[StructInfo]] = None,  # noqa: N802
             ret: Optional[StructInfo] = None, purity: bool = True) -> FuncStructInfo:
    return FuncStructInfo(None if params is None else tuple(params),
                          ret if ret is not None else ObjectStructInfo(), purity)
