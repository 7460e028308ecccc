"""Expressions of the graph level (the `tvm.relax` names).

Leaves: Var / DataflowVar (identified by the object; the name is only for printing), Constant
(a numpy array), ShapeExpr, PrimValue, StringImm, DataTypeImm, GlobalVar, ExternFunc and Op.
Compound: Call, Tuple, TupleGetItem, If, SeqExpr (binding blocks, then a body), Function.
Bindings: VarBinding (`var = value`) and MatchCast (`var = match_cast(value, struct_info)`)
grouped in a BindingBlock or a DataflowBlock (pure, side-effect free, whose DataflowVars do not
escape it).

Every node is an immutable value (a frozen, slotted dataclass). `expr.struct_info` is the
node's struct info: declared for variables and function parameters, derived for everything
else (by the operator's registered inference function for a Call). The derived value is
computed once, when first asked for, and kept in the node: it depends only on the node's
children, so the node stays a value. Inference errors raise `TypeInferenceError`.

Python operators build calls of the elementwise operators (`x + y` is `R.add(x, y)`), and
`t[i]` of a tuple-valued expression is `TupleGetItem(t, i)`.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional

import numpy as np

from ..ir.errors import IRError, TypeInferenceError
from ..ir.node import Node
from ..tir import expr as E
from . import struct_info_analysis as analysis
from .attrs import Attrs
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    as_dtype_str,
    as_shape,
)


class Expr(Node):
    """Base of every graph-level expression."""

    __slots__ = ()

    @property
    def struct_info(self) -> StructInfo:
        cached = self._sinfo
        if cached is None:
            cached = self._infer_struct_info()
            object.__setattr__(self, "_sinfo", cached)
        return cached

    @property
    def struct_info_(self) -> StructInfo:
        return self.struct_info

    def _infer_struct_info(self) -> StructInfo:
        return ObjectStructInfo()

    def _infer_call(self, call: "Call") -> StructInfo:
        """The struct info of `call`, whose callee is this expression."""
        s = self.struct_info
        if isinstance(s, FuncStructInfo):
            return analysis.call_ret(s, [a.struct_info for a in call.args])
        raise TypeInferenceError(f"cannot call a value of struct info {s}")

    # ---- Python operators build elementwise calls -------------------------------------------
    def _binary(self, name: str, other: Any, reverse: bool = False) -> "Call":
        other = lift_operand(other, self)
        a, b = (other, self) if reverse else (self, other)
        return Call(Op.get(name), (a, b))

    def __add__(self, o):
        return self._binary("relax.add", o)

    def __radd__(self, o):
        return self._binary("relax.add", o, True)

    def __sub__(self, o):
        return self._binary("relax.subtract", o)

    def __rsub__(self, o):
        return self._binary("relax.subtract", o, True)

    def __mul__(self, o):
        return self._binary("relax.multiply", o)

    def __rmul__(self, o):
        return self._binary("relax.multiply", o, True)

    def __truediv__(self, o):
        return self._binary("relax.divide", o)

    def __rtruediv__(self, o):
        return self._binary("relax.divide", o, True)

    def __floordiv__(self, o):
        return self._binary("relax.floor_divide", o)

    def __pow__(self, o):
        return self._binary("relax.power", o)

    def __neg__(self):
        return Call(Op.get("relax.negative"), (self,))

    def __getitem__(self, index: int) -> "TupleGetItem":
        return TupleGetItem(self, index)

    def astype(self, dtype: str) -> "Call":
        return Call(Op.get("relax.astype"), (self,), Attrs.of({"dtype": as_dtype_str(dtype)}))

    __hash__ = Node.__hash__


def lift_operand(value: Any, like: Expr) -> Expr:
    """A Python number as a scalar constant of `like`'s dtype (float32 when unknown)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        s = like.struct_info
        dtype = s.dtype if isinstance(s, TensorStructInfo) and s.dtype != "void" else None
        return const(value, dtype)
    raise IRError(f"cannot use {value!r} as an operand of a graph-level expression")


def _sinfo_field():
    return field(default=None, init=False, repr=False)


# ---- leaves ---------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Var(Expr):
    """A variable; identified by the object. `struct_info` is declared (ObjectStructInfo when
    not given)."""

    name_hint: str = "v"
    struct_info: StructInfo = None  # type: ignore[assignment]

    def __post_init__(self):
        s = self.struct_info
        if s is None:
            s = ObjectStructInfo()
        if not isinstance(s, StructInfo):
            raise IRError(f"Var {self.name_hint!r}: struct_info must be a StructInfo (e.g. "
                          f"R.Tensor((1, 3), 'float32')), got {s!r}")
        object.__setattr__(self, "struct_info", s)

    @property
    def _sinfo(self) -> StructInfo:
        return self.struct_info


@dataclass(frozen=True, eq=False, slots=True)
class DataflowVar(Var):
    """A variable bound in a dataflow block, visible only inside it."""


@dataclass(frozen=True, eq=False, slots=True)
class Constant(Expr):
    """A constant tensor (a read-only numpy array)."""

    data: np.ndarray
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        data = np.array(self.data, copy=True)
        data.setflags(write=False)
        object.__setattr__(self, "data", data)

    def _infer_struct_info(self) -> StructInfo:
        return TensorStructInfo(self.data.shape, str(self.data.dtype))


@dataclass(frozen=True, eq=False, slots=True)
class ShapeExpr(Expr):
    """A shape value: dims are ints or symbolic PrimExprs."""

    values: typing.Tuple[Any, ...] = ()
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        object.__setattr__(self, "values", as_shape(self.values))

    def _infer_struct_info(self) -> StructInfo:
        return ShapeStructInfo(self.values)


@dataclass(frozen=True, eq=False, slots=True)
class PrimValue(Expr):
    """A scalar value (an int, a float or a PrimExpr), typed by `dtype`."""

    value: Any
    dtype: str = ""
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        v = self.value
        if isinstance(v, (E.IntImm, E.FloatImm)):
            object.__setattr__(self, "dtype", self.dtype or str(v.dtype))
            v = v.value
            object.__setattr__(self, "value", v)
        if isinstance(v, bool):
            dtype = "bool"
        elif isinstance(v, (int, np.integer)):
            dtype, v = "int64", int(v)
        elif isinstance(v, (float, np.floating)):
            dtype, v = "float32", float(v)
        elif isinstance(v, E.PrimExpr):
            dtype = str(v.dtype)
        else:
            raise IRError(f"PrimValue: expected an int, a float or a PrimExpr, got {v!r}")
        object.__setattr__(self, "value", v)
        object.__setattr__(self, "dtype", as_dtype_str(self.dtype or dtype))

    def _infer_struct_info(self) -> StructInfo:
        return PrimStructInfo(self.dtype, self.value)


@dataclass(frozen=True, eq=False, slots=True)
class StringImm(Expr):
    value: str
    _sinfo: Optional[StructInfo] = _sinfo_field()


@dataclass(frozen=True, eq=False, slots=True)
class DataTypeImm(Expr):
    """A dtype as a value."""

    value: str
    _sinfo: Optional[StructInfo] = _sinfo_field()


@dataclass(frozen=True, eq=False, slots=True)
class GlobalVar(Expr):
    """A module-level function, referred to by name (two GlobalVars of one name are the same
    function). Its struct info is set when its function is added to a module by a builder;
    until then it is an opaque function."""

    name_hint: str
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def _infer_struct_info(self) -> StructInfo:
        return FuncStructInfo.opaque_func()


@dataclass(frozen=True, eq=False, slots=True)
class ExternFunc(Expr):
    """A function found by name at run time (a packed function)."""

    global_symbol: str
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def _infer_struct_info(self) -> StructInfo:
        return FuncStructInfo.opaque_func()

    def _infer_call(self, call: "Call") -> StructInfo:
        if call.sinfo_args:
            return call.sinfo_args[0]
        return ObjectStructInfo()


InferFn = Callable[["Call"], StructInfo]


@dataclass(frozen=True, eq=False, slots=True)
class Op(Expr):
    """A primitive operator, by name ("relax.nn.conv2d"); `Op.get(name)` gives the one instance.

    Each operator has attributes in the registry (`get_attr`): "FInferStructInfo" (call ->
    StructInfo), "attrs" (names and defaults of its call attributes, in order), "num_inputs",
    "purity" and whatever passes add with `Op.register_attr` (e.g. a legalization function)."""

    name: str
    _sinfo: Optional[StructInfo] = _sinfo_field()

    _REGISTRY: typing.ClassVar[Dict[str, "Op"]] = {}
    _ATTRS: typing.ClassVar[Dict[str, Dict[str, Any]]] = {}

    @staticmethod
    def get(name: str) -> "Op":
        op = Op._REGISTRY.get(name)
        if op is None:
            close = sorted(n for n in Op._REGISTRY if n.split(".")[-1] == name.split(".")[-1])
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise IRError(f"unknown operator {name!r}{hint}")
        return op

    @staticmethod
    def register(name: str, infer: InferFn, attrs: Optional[Mapping[str, Any]] = None,
                 num_inputs: int = -1, purity: bool = True) -> "Op":
        """Registers operator `name` (once) with its inference function and attribute
        defaults; returns it."""
        if name in Op._REGISTRY:
            raise IRError(f"operator {name!r} is registered twice")
        op = Op(name)
        Op._REGISTRY[name] = op
        Op._ATTRS[name] = {"FInferStructInfo": infer, "attrs": dict(attrs or {}),
                           "num_inputs": num_inputs, "purity": purity}
        return op

    @staticmethod
    def list_op_names() -> typing.List[str]:
        return sorted(Op._REGISTRY)

    @staticmethod
    def register_attr(name: str, key: str, value: Any) -> None:
        """Adds attribute `key` of operator `name` (e.g. "FLegalize")."""
        Op.get(name)
        Op._ATTRS[name][key] = value

    def get_attr(self, key: str, default: Any = None) -> Any:
        return Op._ATTRS[self.name].get(key, default)

    def _infer_call(self, call: "Call") -> StructInfo:
        infer = self.get_attr("FInferStructInfo")
        return infer(call)

    def _infer_struct_info(self) -> StructInfo:
        return FuncStructInfo.opaque_func(purity=self.get_attr("purity", True))


# ---- compound -------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Call(Expr):
    """`op(*args)` with attributes; `sinfo_args` carry struct infos some operators need
    (call_tir's output, an extern function's result)."""

    op: Expr
    args: typing.Tuple[Expr, ...] = ()
    attrs: Optional[Attrs] = None
    sinfo_args: typing.Tuple[StructInfo, ...] = ()
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        args = tuple(self.args)
        for i, a in enumerate(args):
            if not isinstance(a, Expr):
                raise IRError(f"call of {_callee_name(self.op)}: argument {i} must be a "
                              f"graph-level expression, got {a!r}")
        object.__setattr__(self, "args", args)
        attrs = self.attrs
        if attrs is None:
            attrs = Attrs()
        elif not isinstance(attrs, Attrs):
            attrs = Attrs.of(attrs)
        object.__setattr__(self, "attrs", attrs)
        object.__setattr__(self, "sinfo_args", tuple(self.sinfo_args))

    def _infer_struct_info(self) -> StructInfo:
        return self.op._infer_call(self)


def _callee_name(op: Any) -> str:
    return getattr(op, "name", None) or getattr(op, "name_hint", None) or type(op).__name__


@dataclass(frozen=True, eq=False, slots=True)
class Tuple(Expr):
    fields: typing.Tuple[Expr, ...] = ()
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        fields = tuple(self.fields)
        for f in fields:
            if not isinstance(f, Expr):
                raise IRError(f"Tuple: fields must be graph-level expressions, got {f!r}")
        object.__setattr__(self, "fields", fields)

    def _infer_struct_info(self) -> StructInfo:
        return TupleStructInfo([f.struct_info for f in self.fields])

    def __len__(self) -> int:
        return len(self.fields)


@dataclass(frozen=True, eq=False, slots=True)
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def _infer_struct_info(self) -> StructInfo:
        s = self.tuple_value.struct_info
        if isinstance(s, ObjectStructInfo):
            return ObjectStructInfo()
        if not isinstance(s, TupleStructInfo):
            raise TypeInferenceError(f"TupleGetItem: indexing a value of struct info {s}, "
                                     "which is not a tuple")
        if not -len(s.fields) <= self.index < len(s.fields):
            raise TypeInferenceError(f"TupleGetItem: index {self.index} is out of range for a "
                                     f"tuple of {len(s.fields)} fields")
        return s.fields[self.index]


# ---- bindings -------------------------------------------------------------------------------
class Binding(Node):
    __slots__ = ()


@dataclass(frozen=True, eq=False, slots=True)
class VarBinding(Binding):
    """`var = value`."""

    var: Var
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class MatchCast(Binding):
    """`var = R.match_cast(value, struct_info)`: checks at run time that `value` has
    `struct_info`, binding the symbolic dims it mentions for the first time."""

    var: Var
    value: Expr
    struct_info: StructInfo


@dataclass(frozen=True, eq=False, slots=True)
class BindingBlock(Node):
    bindings: typing.Tuple[Binding, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "bindings", tuple(self.bindings))


@dataclass(frozen=True, eq=False, slots=True)
class DataflowBlock(BindingBlock):
    """A block of pure bindings; its DataflowVars are not visible outside it."""


@dataclass(frozen=True, eq=False, slots=True)
class SeqExpr(Expr):
    """Binding blocks evaluated in order, then `body`."""

    blocks: typing.Tuple[BindingBlock, ...]
    body: Expr
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        object.__setattr__(self, "blocks", tuple(self.blocks))

    def _infer_struct_info(self) -> StructInfo:
        return self.body.struct_info


@dataclass(frozen=True, eq=False, slots=True)
class If(Expr):
    """`true_branch if cond else false_branch`; `cond` is a bool scalar (a 0-d tensor or a
    PrimValue). The branches are SeqExprs (a plain expression is wrapped in one)."""

    cond: Expr
    true_branch: Expr
    false_branch: Expr
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        for name in ("true_branch", "false_branch"):
            b = getattr(self, name)
            if not isinstance(b, SeqExpr):
                object.__setattr__(self, name, SeqExpr((), b))

    def _infer_struct_info(self) -> StructInfo:
        c = self.cond.struct_info
        if isinstance(c, TensorStructInfo) and c.ndim not in (-1, 0):
            raise TypeInferenceError(f"If: the condition must be a scalar, got {c}")
        return analysis.lca(self.true_branch.struct_info, self.false_branch.struct_info)


@dataclass(frozen=True, eq=False, slots=True)
class Function(Expr):
    """A function: `params` (Vars with their struct info), a body (a SeqExpr), the declared
    return struct info (derived from the body when None), purity and attrs ("global_symbol",
    "Primitive", "num_input", ...)."""

    params: typing.Tuple[Var, ...]
    body: Expr
    ret_struct_info: Optional[StructInfo] = None
    is_pure: bool = True
    attrs: Mapping[str, Any] = field(default_factory=dict)
    _sinfo: Optional[StructInfo] = _sinfo_field()

    def __post_init__(self):
        params = tuple(self.params)
        for p in params:
            if not isinstance(p, Var):
                raise IRError(f"Function: parameters must be relax Vars, got {p!r}")
        object.__setattr__(self, "params", params)
        if not isinstance(self.body, SeqExpr):
            object.__setattr__(self, "body", SeqExpr((), self.body))
        if self.ret_struct_info is None:
            object.__setattr__(self, "ret_struct_info", self.body.struct_info)
        object.__setattr__(self, "attrs", dict(self.attrs or {}))

    def _infer_struct_info(self) -> StructInfo:
        return FuncStructInfo([p.struct_info for p in self.params], self.ret_struct_info,
                              self.is_pure)

    def with_attr(self, key: str, value: Any) -> "Function":
        attrs = dict(self.attrs)
        attrs[key] = value
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure, attrs)

    def without_attr(self, key: str) -> "Function":
        attrs = {k: v for k, v in self.attrs.items() if k != key}
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure, attrs)


# ---- helpers --------------------------------------------------------------------------------
_PY_DTYPES = {bool: "bool", int: "int64", float: "float32"}


def const(value: Any, dtype: Optional[str] = None) -> Constant:
    """A Constant from a number, a nested list or a numpy array. Without `dtype`: Python bools
    are bool, ints int64, floats float32; a numpy array keeps its dtype."""
    if isinstance(value, Constant):
        value = value.data
    if dtype is None:
        if isinstance(value, (np.ndarray, np.generic)):
            arr = np.asarray(value)
        else:
            arr = np.asarray(value)
            kind = _PY_DTYPES.get(type(value))
            if kind is None:
                kind = {"b": "bool", "i": "int64", "u": "int64", "f": "float32"}.get(
                    arr.dtype.kind, str(arr.dtype))
            arr = arr.astype(kind)
    else:
        arr = np.asarray(value).astype(as_dtype_str(dtype))
    return Constant(arr)


def set_struct_info(expr: Expr, sinfo: StructInfo) -> None:
    """Sets the struct info of a node that has none yet (a GlobalVar when its function is added
    to a module); a node whose struct info is already known keeps it."""
    if isinstance(expr, Var):
        raise IRError("a Var's struct info is declared when the Var is made")
    if expr._sinfo is None:
        object.__setattr__(expr, "_sinfo", sinfo)


LEAF_TYPES = (Var, Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm, GlobalVar,
              ExternFunc, Op)


def is_leaf(e: Expr) -> bool:
    """Whether `e` may appear as a call argument in normal form: a leaf or a tuple of them."""
    if isinstance(e, Tuple):
        return all(is_leaf(f) for f in e.fields)
    return isinstance(e, LEAF_TYPES)


def is_op_call(e: Any, name: str) -> bool:
    """Whether `e` is a call of the operator named `name` (e.g. "relax.add")."""
    return isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == name
