"""Struct info: the types of the graph level, with shapes (the `tvm.relax` *StructInfo names).

    TensorStructInfo((n, 4), "float32")    a tensor; dims are ints or loop-IR PrimExprs (a
                                           symbolic dim is a `tir.Var`, int64); shape=None with
                                           ndim=-1 (or a known ndim) when unknown
    TupleStructInfo([a, b])                a tuple of values
    ShapeStructInfo((n, 4))                a shape value (what `R.shape([...])` is)
    PrimStructInfo("int64", value)         a scalar, optionally with a known value
    ObjectStructInfo()                     anything
    FuncStructInfo([params], ret)          a function

dtypes are plain `str`; "void" is an unknown dtype. Every node is an immutable value; compare
them with `compiler.ir.structural_equal` (symbolic dims compare like any loop-IR variable).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple, Union

from ..ir.dtype import as_dtype
from ..ir.errors import IRError
from ..ir.node import Node
from ..tir import expr as E

Dim = Union[int, E.PrimExpr]


class StructInfo(Node):
    """Base of every struct info."""

    __slots__ = ()


def as_dim(value: Any) -> Dim:
    """One dimension: a Python int (from an int or an integer constant) or a symbolic PrimExpr."""
    if isinstance(value, bool):
        raise IRError(f"a shape dimension must be an integer, got {value!r}")
    if isinstance(value, (int,)) or hasattr(value, "__index__") and not isinstance(value, Node):
        return int(value)
    if isinstance(value, E.IntImm):
        return int(value.value)
    if isinstance(value, E.PrimExpr) and value.dtype.is_integer:
        return value
    raise IRError(f"a shape dimension must be an int or an integer PrimExpr (e.g. tir.Var('n', "
                  f"'int64')), got {value!r}")


def as_shape(values: Any) -> Tuple[Dim, ...]:
    """A shape tuple from a list/tuple of dims, or from anything with `.values` (a ShapeExpr)."""
    if hasattr(values, "values") and not isinstance(values, (list, tuple, dict)):
        values = values.values
    if not isinstance(values, (list, tuple)):
        raise IRError(f"a shape must be a list or tuple of dims, got {values!r}")
    return tuple(as_dim(v) for v in values)


def as_dtype_str(dtype: Any) -> str:
    """The plain-str name of a dtype; None and "" and "void" mean unknown ("void")."""
    if dtype is None or dtype == "" or dtype == "void":
        return "void"
    return str(as_dtype(str(dtype)))


@dataclass(frozen=True, eq=False, slots=True)
class ObjectStructInfo(StructInfo):
    """Any value."""


@dataclass(frozen=True, eq=False, slots=True)
class PrimStructInfo(StructInfo):
    """A scalar of `dtype`; `value` is its value when known (an int, a float or a PrimExpr)."""

    dtype: str = "int64"
    value: Any = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype_str(self.dtype))
        if isinstance(self.value, (E.IntImm, E.FloatImm)):
            object.__setattr__(self, "value", self.value.value)


@dataclass(frozen=True, eq=False, slots=True)
class ShapeStructInfo(StructInfo):
    """A shape value; `values` when its dims are known, else only `ndim` (-1: unknown)."""

    values: Optional[Tuple[Dim, ...]] = None
    ndim: int = -1

    def __post_init__(self):
        if self.values is not None:
            values = as_shape(self.values)
            if self.ndim not in (-1, len(values)):
                raise IRError(f"ShapeStructInfo: {len(values)} values but ndim={self.ndim}")
            object.__setattr__(self, "values", values)
            object.__setattr__(self, "ndim", len(values))


@dataclass(frozen=True, eq=False, slots=True)
class TensorStructInfo(StructInfo):
    """A tensor of `dtype` ("void": unknown); `shape` when known (then `ndim == len(shape)`),
    else `ndim` alone (-1: unknown rank)."""

    shape: Optional[Tuple[Dim, ...]] = None
    dtype: str = "float32"
    ndim: int = -1

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype_str(self.dtype))
        if self.shape is not None:
            shape = as_shape(self.shape)
            if self.ndim not in (-1, len(shape)):
                raise IRError(f"TensorStructInfo: shape {shape} has {len(shape)} dims but "
                              f"ndim={self.ndim}")
            object.__setattr__(self, "shape", shape)
            object.__setattr__(self, "ndim", len(shape))

    @property
    def is_unknown_ndim(self) -> bool:
        return self.ndim < 0

    @property
    def is_static(self) -> bool:
        """Whether every dim is a known int."""
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)


@dataclass(frozen=True, eq=False, slots=True)
class TupleStructInfo(StructInfo):
    """A tuple whose fields have these struct infos."""

    fields: Tuple[StructInfo, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))


@dataclass(frozen=True, eq=False, slots=True)
class FuncStructInfo(StructInfo):
    """A function from `params` (None: opaque, any arguments) to `ret`; `purity` False when it
    has side effects."""

    params: Optional[Tuple[StructInfo, ...]] = None
    ret: StructInfo = ObjectStructInfo()
    purity: bool = True

    def __post_init__(self):
        if self.params is not None:
            object.__setattr__(self, "params", tuple(self.params))

    @staticmethod
    def opaque_func(ret: Optional[StructInfo] = None, purity: bool = True) -> "FuncStructInfo":
        return FuncStructInfo(None, ret if ret is not None else ObjectStructInfo(), purity)
