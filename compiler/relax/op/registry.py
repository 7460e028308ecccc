"""How operator families register themselves: `register(name, infer, arg_names, attrs,
pattern=...)` adds the Op with its inference function, attribute defaults and fusion pattern;
`make_call(name, args, **attrs)` builds a call, filling defaults and rejecting unknown
attributes; the `tensor_arg` / `fail` helpers give inference functions messages that name
the operator and the argument."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ...ir.errors import IRError, TypeInferenceError
from .. import shape_util
from ..attrs import Attrs
from ..expr import Call, Expr, Op
from ..struct_info import ObjectStructInfo, StructInfo, TensorStructInfo
from .pattern import ATTR


def register(name: str, infer, arg_names: Sequence[str] = (),
             attrs: Optional[Mapping[str, Any]] = None, purity: bool = True,
             pattern: Optional[int] = None) -> Op:
    """Registers operator `name`: its inference function, argument names, attribute defaults,
    purity and fusion pattern (pattern.py; None: opaque, never fused with others)."""
    op = Op.register(name, infer, attrs, len(arg_names), purity)
    Op.register_attr(name, "arg_names", tuple(arg_names))
    if pattern is not None:
        Op.register_attr(name, ATTR, pattern)
    return op


def make_call(name: str, args: Sequence[Expr], sinfo_args: Sequence[StructInfo] = (),
              **attrs: Any) -> Call:
    """`name(*args)` with `attrs` over the operator's registered defaults."""
    op = Op.get(name)
    defaults = op.get_attr("attrs")
    unknown = sorted(set(attrs) - set(defaults))
    if unknown:
        raise IRError(f"{name}: unknown attribute(s) {unknown}; it takes {list(defaults)}")
    values = {k: attrs.get(k, v) for k, v in defaults.items()}
    return Call(op, tuple(args), Attrs.of(values) if values else None, tuple(sinfo_args))


def op_name(call: Call) -> str:
    return getattr(call.op, "name", "call")


def arg_name(call: Call, index: int) -> str:
    names = call.op.get_attr("arg_names") if isinstance(call.op, Op) else ()
    return names[index] if index < len(names) else f"argument {index}"


def fail(call: Call, message: str) -> TypeInferenceError:
    """The error to raise: `raise fail(call, "data has ...")`."""
    return TypeInferenceError(f"{op_name(call)}: {message}")


def check_arity(call: Call, lo: int, hi: Optional[int] = None) -> None:
    hi = lo if hi is None else hi
    n = len(call.args)
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise fail(call, f"takes {want} arguments, got {n}")


def tensor_arg(call: Call, index: int) -> TensorStructInfo:
    """The TensorStructInfo of argument `index`, or an error naming it."""
    s = call.args[index].struct_info
    if isinstance(s, TensorStructInfo):
        return s
    if isinstance(s, ObjectStructInfo):
        return TensorStructInfo(None, "void")
    raise fail(call, f"{arg_name(call, index)} must be a tensor, got {s}")


def float_dtype(call: Call, index: int, s: TensorStructInfo) -> None:
    if s.dtype != "void" and not (s.dtype.startswith("float") or s.dtype.startswith("bfloat")):
        raise fail(call, f"{arg_name(call, index)} has dtype {s.dtype}, but the operator needs a "
                         "float tensor; cast it with R.astype")


def same_dtype(call: Call, i: int, a: TensorStructInfo, j: int, b: TensorStructInfo) -> str:
    """The common dtype of two arguments (an error when both are known and differ)."""
    if a.dtype == "void":
        return b.dtype
    if b.dtype == "void" or a.dtype == b.dtype:
        return a.dtype
    raise fail(call, f"{arg_name(call, i)} has dtype {a.dtype} but {arg_name(call, j)} has dtype "
                     f"{b.dtype}; cast one of them with R.astype")


def axis_of(call: Call, axis: int, ndim: int, what: str = "axis") -> int:
    """`axis` normalized into [0, ndim), or an error."""
    a = shape_util.normalize_axis(int(axis), ndim)
    if a is None:
        raise fail(call, f"{what} {axis} is out of range for a tensor of {ndim} dims")
    return a


def axes_of(call: Call, axes, ndim: int) -> tuple:
    out = tuple(axis_of(call, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise fail(call, f"repeated axes {tuple(axes)}")
    return out


def fmt_shape(s: TensorStructInfo) -> str:
    if s.shape is None:
        return f"(unknown, ndim={s.ndim})"
    return "(" + ", ".join(str(d) for d in s.shape) + ("," if len(s.shape) == 1 else "") + ")"


def pair(value, n: int, name: str) -> tuple:
    """An int or a sequence as a tuple of n ints (a 1-sequence repeated)."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise IRError(f"{name} must have {n} values, got {value}")
    return value


def padding4(value, name: str = "padding") -> tuple:
    """2-D padding as (top, left, bottom, right) from an int, (h, w) or 4 values."""
    if isinstance(value, int):
        return (value,) * 4
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 4
    if len(value) == 2:
        return value + value
    if len(value) == 4:
        return value
    raise IRError(f"{name} must have 1, 2 or 4 values (top, left, bottom, right), got {value}")
