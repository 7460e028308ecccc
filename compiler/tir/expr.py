"""Expressions of the loop IR.

Every node is an immutable value (a frozen, slotted dataclass). Identity matters: a `Var` is
identified by the object, never by its name, so nodes compare and hash by identity; structural
comparison is `compiler.ir.structural_equal`. Python operators build nodes (`a + 1`, `a < b`,
`a // b` is floor division, `a % b` floor modulo, `a / b` truncating division for integers and
true division for floats). `a == b` builds an EQ node that also works as `a.same_as(b)` in a
boolean context, so nodes can be dictionary keys. The second half builds expressions from
Python values: constants, conversion, operand dtype unification (numeric promotion, int → float,
scalar → vector), casts and logical connectives; `binary(cls, a, b)` is what the operators call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple, Union

import numpy as np

from ..ir.dtype import DType, DTypeLike, as_dtype, boolean, float32, int32, int64
from ..ir.errors import IRError
from ..ir.node import Node


def _defers(o) -> bool:
    """Whether `o` takes the arithmetic operators over from an expression (te.Tensor does)."""
    return getattr(type(o), "takes_expr_operators", False)


class PrimExpr(Node):
    """A scalar (or vector) expression with a `dtype`."""

    __slots__ = ()
    dtype: DType

    # Python operators build IR. Both operands are converted with `convert`; an operand that
    # builds a whole-tensor operation (a te.Tensor: `n + A`) handles the operator itself.
    def __add__(self, o):
        return NotImplemented if _defers(o) else binary(Add, self, o)

    def __radd__(self, o):
        return NotImplemented if _defers(o) else binary(Add, o, self)

    def __sub__(self, o):
        return NotImplemented if _defers(o) else binary(Sub, self, o)

    def __rsub__(self, o):
        return NotImplemented if _defers(o) else binary(Sub, o, self)

    def __mul__(self, o):
        return NotImplemented if _defers(o) else binary(Mul, self, o)

    def __rmul__(self, o):
        return NotImplemented if _defers(o) else binary(Mul, o, self)

    def __truediv__(self, o):
        return NotImplemented if _defers(o) else binary(Div, self, o)

    def __rtruediv__(self, o):
        return NotImplemented if _defers(o) else binary(Div, o, self)

    def __floordiv__(self, o):
        return NotImplemented if _defers(o) else binary(FloorDiv, self, o)

    def __rfloordiv__(self, o):
        return NotImplemented if _defers(o) else binary(FloorDiv, o, self)

    def __mod__(self, o):
        return NotImplemented if _defers(o) else binary(FloorMod, self, o)

    def __rmod__(self, o):
        return NotImplemented if _defers(o) else binary(FloorMod, o, self)

    def __neg__(self):
        return binary(Sub, make_const(self.dtype, 0), self)

    def __lt__(self, o):
        return binary(LT, self, o)

    def __le__(self, o):
        return binary(LE, self, o)

    def __gt__(self, o):
        return binary(GT, self, o)

    def __ge__(self, o):
        return binary(GE, self, o)

    def __eq__(self, o):  # type: ignore[override]
        return EqualOp(self, o)

    def __ne__(self, o):  # type: ignore[override]
        return NotEqualOp(self, o)

    def __and__(self, o):
        return logical_and(self, o)

    def __or__(self, o):
        return logical_or(self, o)

    def __invert__(self):
        return logical_not(self)

    def __lshift__(self, o):
        return shift(SHIFT_LEFT, self, o)

    def __rlshift__(self, o):
        return shift(SHIFT_LEFT, o, self)

    def __rshift__(self, o):
        return shift(SHIFT_RIGHT, self, o)

    def __rrshift__(self, o):
        return shift(SHIFT_RIGHT, o, self)

    def __bool__(self) -> bool:
        raise IRError(
            f"cannot use the symbolic expression {self} as a Python bool; use "
            "compiler.te.if_then_else / all / any, or compare with .same_as()")

    __hash__ = Node.__hash__

    def astype(self, dtype: DTypeLike) -> "PrimExpr":
        return cast(dtype, self)

    def equal(self, o) -> "PrimExpr":
        """The EQ node (what `==` builds), as a plain expression."""
        return binary(EQ, self, o)


# ---- leaves ---------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Var(PrimExpr):
    """A variable; identified by the object. `name` is only for printing."""

    name: str = "v"
    dtype: DType = int32

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))


@dataclass(frozen=True, eq=False, slots=True)
class SizeVar(Var):
    """A variable known to be non-negative (a symbolic shape)."""


@dataclass(frozen=True, eq=False, slots=True)
class IntImm(PrimExpr):
    """An integer (or bool) constant; `int(c)` and `bool(c)` give its value, as in TVM."""

    dtype: DType
    value: int

    def __post_init__(self):
        if isinstance(self.dtype, str):  # IntImm("int64", 2), as TVM's constructor takes it
            object.__setattr__(self, "dtype", as_dtype(self.dtype))

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return self.value != 0

    # As TVM's: a constant compared with a Python int or a constant of its dtype folds to a bool
    # constant, and hashes by value, so `set(shape) == {2, 3}` holds for constant dims.
    def __eq__(self, o):  # type: ignore[override]
        v = _folded_value(self, o)
        return EqualOp(self, o) if v is None else const(self.value == v, "bool")

    def __ne__(self, o):  # type: ignore[override]
        v = _folded_value(self, o)
        return NotEqualOp(self, o) if v is None else const(self.value != v, "bool")

    def __hash__(self) -> int:
        return hash(self.value)


@dataclass(frozen=True, eq=False, slots=True)
class FloatImm(PrimExpr):
    """A float constant; `float(c)` gives its value, as in TVM."""

    dtype: DType
    value: float

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)


def _folded_value(c: "IntImm", o):
    """The value `c == o` compares with when it folds: a Python int (or bool), or a constant of
    c's dtype; None when the comparison stays symbolic."""
    if isinstance(o, (bool, int)) and not isinstance(o, PrimExpr):
        return int(o)
    if type(o) is IntImm and o.dtype == c.dtype:
        return o.value
    return None


@dataclass(frozen=True, eq=False, slots=True)
class StringImm(PrimExpr):
    """A string constant; it equals a str or StringImm of the same text (as TVM's)."""

    value: str
    dtype: DType = field(default=DType(3, 64))

    def __eq__(self, o):  # type: ignore[override]
        if isinstance(o, (str, StringImm)):
            return self.value == (o.value if isinstance(o, StringImm) else o)
        return EqualOp(self, o)

    def __ne__(self, o):  # type: ignore[override]
        if isinstance(o, (str, StringImm)):
            return self.value != (o.value if isinstance(o, StringImm) else o)
        return NotEqualOp(self, o)

    __hash__ = PrimExpr.__hash__


@dataclass(frozen=True, eq=False, slots=True)
class Cast(PrimExpr):
    dtype: DType
    value: PrimExpr


# ---- arithmetic and comparison --------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class BinaryOp(PrimExpr):
    a: PrimExpr
    b: PrimExpr
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.result_dtype(self.a.dtype))

    @staticmethod
    def result_dtype(operand: DType) -> DType:
        return operand


class Add(BinaryOp):
    __slots__ = ()


class Sub(BinaryOp):
    __slots__ = ()


class Mul(BinaryOp):
    __slots__ = ()


class Div(BinaryOp):
    """Truncating division for integers, true division for floats."""

    __slots__ = ()


class Mod(BinaryOp):
    """Truncating remainder (C's %)."""

    __slots__ = ()


class FloorDiv(BinaryOp):
    __slots__ = ()


class FloorMod(BinaryOp):
    __slots__ = ()


class Min(BinaryOp):
    __slots__ = ()


class Max(BinaryOp):
    __slots__ = ()


class CmpOp(BinaryOp):
    __slots__ = ()

    @staticmethod
    def result_dtype(operand: DType) -> DType:
        return boolean.with_lanes(operand.lanes)


class EQ(CmpOp):
    __slots__ = ()


class NE(CmpOp):
    __slots__ = ()


class LT(CmpOp):
    __slots__ = ()


class LE(CmpOp):
    __slots__ = ()


class GT(CmpOp):
    __slots__ = ()


class GE(CmpOp):
    __slots__ = ()


class And(BinaryOp):
    __slots__ = ()


class Or(BinaryOp):
    __slots__ = ()


@dataclass(frozen=True, eq=False, slots=True)
class Not(PrimExpr):
    a: PrimExpr
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.a.dtype)


@dataclass(frozen=True, eq=False, slots=True)
class Select(PrimExpr):
    """`true_value if condition else false_value`; both sides may be evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if not all(type(x) not in (EqualOp, NotEqualOp) and isinstance(x, PrimExpr)
                   for x in (self.condition, self.true_value, self.false_value)):
            # Python values, as TVM converts them: `Select(x < 0, 0.0, x)`
            t, f = self.true_value, self.false_value
            t = _match_python(t, convert(f)) if not isinstance(t, PrimExpr) else convert(t)
            f = _match_python(f, t) if not isinstance(f, PrimExpr) else convert(f)
            object.__setattr__(self, "condition", convert(self.condition))
            object.__setattr__(self, "true_value", t)
            object.__setattr__(self, "false_value", f)
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.true_value.dtype)


# ---- memory, vectors, calls -----------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class BufferLoad(PrimExpr):
    """`buffer[indices]`. A Ramp index loads a vector."""

    buffer: Any  # compiler.ir.buffer.Buffer
    indices: Tuple[PrimExpr, ...]
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if type(self.indices) is not tuple:  # a list, as TVM code passes them
            object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))
        if self.dtype is None:
            lanes = max([i.dtype.lanes for i in self.indices] or [1])
            object.__setattr__(self, "dtype", self.buffer.dtype.with_lanes(
                self.buffer.dtype.lanes * lanes))


@dataclass(frozen=True, eq=False, slots=True)
class Ramp(PrimExpr):
    """The vector `[base, base + stride, ..., base + (lanes - 1) * stride]`."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.base.dtype.with_lanes(self.lanes))


@dataclass(frozen=True, eq=False, slots=True)
class Broadcast(PrimExpr):
    """`value` repeated in `lanes` lanes."""

    value: PrimExpr
    lanes: int
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.value.dtype.with_lanes(self.lanes))


@dataclass(frozen=True, eq=False, slots=True)
class Let(PrimExpr):
    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.body.dtype)


@dataclass(frozen=True, eq=False, slots=True)
class Call(PrimExpr):
    """An intrinsic or external call: `op` names an entry of `compiler.ir.op` ("tir.exp", ...)."""

    dtype: DType
    op: str
    args: Tuple[PrimExpr, ...]


# ---- iteration and reduction (used by te and by loop bindings) ------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Range(Node):
    """The half-open interval [min, min + extent)."""

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_min_extent(min_value, extent) -> "Range":
        return Range(convert(min_value), convert(extent))


class IterKind:
    DATA_PAR = "data_par"
    REDUCE = "reduce"
    THREAD = "thread"
    ORDERED = "ordered"
    OPAQUE = "opaque"


@dataclass(frozen=True, eq=False, slots=True)
class IterVar(Node):
    """A loop axis: `var` ranges over `dom`. `thread_tag` ("blockIdx.x", ...) for thread axes."""

    dom: Optional[Range]
    var: Var
    kind: str = IterKind.DATA_PAR
    thread_tag: str = ""

    # TVM's IterVarType values (`iter_type`); the last four are the annotations a schedule
    # gives a loop (Kiln keeps those on the stage, as TVM does).
    DataPar, ThreadIndex, CommReduce, Ordered, Opaque = 0, 1, 2, 3, 4
    Unrolled, Vectorized, Parallelized, Tensorized = 5, 6, 7, 8

    @property
    def iter_type(self) -> int:
        """TVM's IterVarType of this axis: DataPar, ThreadIndex, CommReduce, Ordered or Opaque."""
        return _ITER_TYPES[self.kind]

    @property
    def name(self) -> str:
        return self.var.name

    # An IterVar used in an expression stands for its variable.
    def _as_expr(self) -> Var:
        return self.var

    # As TVM's: `iv == 0` is an EQ expression of the variable (in an `if`, and so as a dict
    # key, it answers identity).
    def __eq__(self, o):  # type: ignore[override]
        return EqualOp(self, o)

    def __ne__(self, o):  # type: ignore[override]
        return NotEqualOp(self, o)

    __hash__ = Node.__hash__


_ITER_TYPES = {IterKind.DATA_PAR: IterVar.DataPar, IterKind.THREAD: IterVar.ThreadIndex,
               IterKind.REDUCE: IterVar.CommReduce, IterKind.ORDERED: IterVar.Ordered,
               IterKind.OPAQUE: IterVar.Opaque}


@dataclass(frozen=True, eq=False, slots=True)
class CommReducer(Node):
    """A commutative reducer: `result = combine(lhs, rhs)` with `identity` elements."""

    lhs: Tuple[Var, ...]
    rhs: Tuple[Var, ...]
    result: Tuple[PrimExpr, ...]
    identity: Tuple[PrimExpr, ...]


@dataclass(frozen=True, eq=False, slots=True)
class Reduce(PrimExpr):
    """Reduction of `source[value_index]` over `axis` with `combiner`, where `condition` holds."""

    combiner: CommReducer
    source: Tuple[PrimExpr, ...]
    axis: Tuple[IterVar, ...]
    condition: PrimExpr
    value_index: int = 0
    init: Tuple[PrimExpr, ...] = ()
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.source[self.value_index].dtype)


# ---- EqualOp: `a == b` that is an EQ node and also a bool ------------------------------------
class EqualOp(PrimExpr):
    """Result of `a == b`: an EQ expression; in `if` it answers `a.same_as(b)`."""

    __slots__ = ("a", "b", "dtype")

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.dtype = boolean

    def __bool__(self) -> bool:
        return self.a is self.b

    def asobject(self) -> PrimExpr:
        return binary(EQ, self.a, self.b)


class NotEqualOp(PrimExpr):
    """Result of `a != b`: an NE expression; in `if` it answers `not a.same_as(b)`."""

    __slots__ = ("a", "b", "dtype")

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.dtype = boolean

    def __bool__(self) -> bool:
        return self.a is not self.b

    def asobject(self) -> PrimExpr:
        return binary(NE, self.a, self.b)



def _delegate_to_var(name):
    def method(self, *args):
        return getattr(self.var, name)(*args)

    method.__name__ = name
    return method


# An IterVar in an expression stands for its variable (`A[i, k]` with k a reduce axis).
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "equal", "astype"):
    setattr(IterVar, _name, _delegate_to_var(_name))


# ---- building expressions from Python values ------------------------------------------------
def make_const(dtype: DTypeLike, value) -> PrimExpr:
    """A constant of `dtype` (a Broadcast for vector dtypes)."""
    dtype = as_dtype(dtype)
    if dtype.lanes > 1:
        return Broadcast(make_const(dtype.element_of(), value), dtype.lanes)
    if dtype.is_float:
        return FloatImm(dtype, float(value))
    if dtype.is_bool:
        return IntImm(dtype, 1 if value else 0)
    if dtype.is_integer:
        value = int(value)
        lo, hi = ((0, 2**dtype.bits - 1) if dtype.is_uint
                  else (-(2**(dtype.bits - 1)), 2**(dtype.bits - 1) - 1))
        if not lo <= value <= hi:
            raise IRError(f"the value {value} does not fit in {dtype} "
                          f"(range {lo} to {hi}); cast it or pick a wider dtype")
        return IntImm(dtype, value)
    raise IRError(f"cannot make a constant of dtype {dtype}")


def const(value, dtype: Optional[DTypeLike] = None) -> PrimExpr:
    """A constant; the dtype defaults to int32 for ints (int64 if it does not fit), float32 for
    floats and bool for bools."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = boolean
        elif isinstance(value, int):
            dtype = int32 if -(2**31) <= value < 2**31 else int64
        elif isinstance(value, float):
            dtype = float32
        else:
            raise IRError(f"cannot make a constant from {value!r}")
    return make_const(dtype, value)


def convert(value) -> PrimExpr:
    """A PrimExpr from an expression, an IterVar, a Python number, bool or string."""
    if isinstance(value, (EqualOp, NotEqualOp)):
        return value.asobject()
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):
        return value.var
    if hasattr(value, "_as_expr"):
        return value._as_expr()
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, str):
        return StringImm(value)
    try:  # numpy scalars

        if isinstance(value, np.generic):
            return const(value.item(), str(value.dtype) if value.dtype != np.bool_ else "bool")
    except ImportError:  # pragma: no cover
        pass
    raise IRError(f"cannot convert {value!r} ({type(value).__name__}) to an expression")


def _match_python(value, other: PrimExpr) -> PrimExpr:
    """A Python number as a constant of the other operand's (element) dtype where it fits."""
    if isinstance(value, bool):
        return make_const(other.dtype, value) if other.dtype.is_bool else const(value)
    if isinstance(value, int):
        if other.dtype.is_float or other.dtype.is_integer:
            return make_const(other.dtype, value)
        return const(value)
    if isinstance(value, float):
        if other.dtype.is_float:
            return make_const(other.dtype, value)
        return const(value)
    return convert(value)


def unify(a: PrimExpr, b: PrimExpr):
    """Binary operands with one dtype: numeric promotion, int→float, scalar→vector broadcast."""
    ta, tb = a.dtype, b.dtype
    if ta == tb:
        return a, b
    if ta.lanes != tb.lanes:
        if ta.lanes == 1:
            a = Broadcast(a, tb.lanes)
        elif tb.lanes == 1:
            b = Broadcast(b, ta.lanes)
        else:
            raise IRError(f"vector lanes differ: {ta} vs {tb}")
        return unify(a, b)
    ea, eb = ta.element_of(), tb.element_of()
    if ea.is_float and not eb.is_float:
        return a, cast(ta, b)
    if eb.is_float and not ea.is_float:
        return cast(tb, a), b
    if ea.code == eb.code or (ea.is_integer and eb.is_integer) or ea.is_bool or eb.is_bool:
        wide = ta if ea.bits >= eb.bits else tb
        if ea.is_float and eb.is_float and ea.code != eb.code:  # bfloat16 vs float16
            wide = float32.with_lanes(ta.lanes)
        return (a if a.dtype == wide else cast(wide, a)), (b if b.dtype == wide else cast(wide, b))
    raise IRError(f"cannot combine operands of dtype {ta} and {tb}")


def binary(cls, a, b) -> PrimExpr:
    if not isinstance(a, PrimExpr) or isinstance(a, (EqualOp, NotEqualOp)):
        a = _match_python(a, convert(b)) if not isinstance(a, (EqualOp, NotEqualOp)) \
            else a.asobject()
    if not isinstance(b, PrimExpr) or isinstance(b, (EqualOp, NotEqualOp)):
        b = _match_python(b, a) if not isinstance(b, (EqualOp, NotEqualOp)) else b.asobject()
    a, b = unify(a, b)
    return cls(a, b)


SHIFT_LEFT, SHIFT_RIGHT = "tir.shift_left", "tir.shift_right"


def shift(op: str, a, b) -> PrimExpr:
    """`a << b` / `a >> b` (op SHIFT_LEFT / SHIFT_RIGHT) on integers, as TVM's shift_left /
    shift_right: the operands are unified like any binary operator; `>>` of a signed integer is
    arithmetic. Two constants fold to a constant."""
    if not isinstance(a, PrimExpr):
        a = _match_python(a, convert(b))
    if not isinstance(b, PrimExpr):
        b = _match_python(b, a)
    a, b = unify(convert(a), convert(b))
    if not a.dtype.is_integer or a.dtype.is_bool:
        sym = "<<" if op == SHIFT_LEFT else ">>"
        raise IRError(f"{sym} needs integer operands, got {a} {sym} {b} of dtype {a.dtype}")
    if isinstance(a, IntImm) and isinstance(b, IntImm) and 0 <= b.value < a.dtype.bits:
        value = a.value << b.value if op == SHIFT_LEFT else a.value >> b.value
        return make_const(a.dtype, _wrap_int(value, a.dtype))
    return Call(a.dtype, op, (a, b))


def cast(dtype: DTypeLike, value) -> PrimExpr:
    dtype = as_dtype(dtype)
    value = convert(value)
    if value.dtype == dtype:
        return value
    if value.dtype.lanes == 1 and dtype.lanes > 1:
        return Broadcast(cast(dtype.element_of(), value), dtype.lanes)
    if isinstance(value, IntImm) and dtype.lanes == 1 and (dtype.is_integer or dtype.is_float):
        return make_const(dtype, _wrap_int(value.value, dtype) if dtype.is_integer else value.value)
    return Cast(dtype, value)


def _wrap_int(value: int, dtype: DType) -> int:
    """`value` converted to an integer dtype as C does (two's-complement wrap-around)."""
    value &= (1 << dtype.bits) - 1
    if dtype.is_int and value >= 1 << (dtype.bits - 1):
        value -= 1 << dtype.bits
    return value


def logical_and(a, b) -> PrimExpr:
    return And(_as_bool(a), _as_bool(b))


def logical_or(a, b) -> PrimExpr:
    return Or(_as_bool(a), _as_bool(b))


def logical_not(a) -> PrimExpr:
    return Not(_as_bool(a))


def _as_bool(x) -> PrimExpr:
    x = convert(x)
    if not x.dtype.is_bool:
        raise IRError(f"expected a boolean expression, got {x} of dtype {x.dtype}")
    return x


def is_const_int(e, value: Optional[int] = None) -> bool:
    """Whether `e` is an integer constant (equal to `value` when given)."""
    return isinstance(e, IntImm) and (value is None or e.value == value)


ExprLike = Union[PrimExpr, int, float, bool]


class ProducerLoad(PrimExpr):
    """An element `producer[indices]` of a tensor that an operation produces, read before
    lowering gives the tensor a buffer (a compute body, a hybrid script's statements). The kind
    made is te's TensorLoad, which knows tensors; `producer` is the tensor."""

    __slots__ = ()
