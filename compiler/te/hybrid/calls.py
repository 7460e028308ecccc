"""The functions a hybrid script calls, as the parser reads them: math intrinsics, casts, `len`,
`min`/`max`, `ceil_div`, `likely`, `max_num_threads`, `inf`/`ninf`, and the buffer
declarations `allocate` / `output_tensor` (which make an `Allocation` for the assignment that
holds them). Loop iterators (`range`, `parallel`, `bind`, ...) are read by the parser's `for`.

Each takes (call node, positional args, keyword args) and returns a value: an expression, or
an Allocation.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Tuple

from ...arith import simplify
from ...ir.dtype import as_dtype
from ...target import Target
from ...tir import expr as E
from ...tir.op import likely as tir_likely
from .. import intrin
from ..tensor import Tensor
from .usage import fail

# Loop iterators and the loop kind they make; const_range loops are unrolled by the parser.
LOOP_KINDS = {"range": "serial", "serial": "serial", "unroll": "unrolled",
              "parallel": "parallel", "vectorize": "vectorized", "const_range": "const"}


@dataclass
class Allocation:
    """What `allocate(shape, dtype, scope)` / `output_tensor(shape, dtype)` declares."""

    shape: Tuple[E.PrimExpr, ...]
    dtype: str
    scope: str


def _expr(node: ast.AST, value: Any, what: str) -> E.PrimExpr:
    try:
        return E.convert(value)
    except Exception:  # noqa: BLE001 - any value that is no expression
        raise fail(node, f"{what} must be an expression, got {value!r}") from None


def _arity(node: ast.Call, args: List[Any], lo: int, hi: int) -> None:
    name = node.func.id
    if not lo <= len(args) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise fail(node, f"{name} takes {want} arguments, got {len(args)}")


def _allocate(node: ast.Call, args: List[Any], kwargs: Dict[str, Any]) -> Allocation:
    name = node.func.id
    params = ["shape", "dtype", "scope"] if name == "allocate" else ["shape", "dtype"]
    if len(args) > len(params):
        raise fail(node, f"{name} takes at most {len(params)} arguments ({', '.join(params)})")
    values = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params or k in values:
            raise fail(node, f"{name}: unexpected or repeated argument '{k}'")
        values[k] = v
    if "shape" not in values:
        raise fail(node, f"{name} needs a shape")
    shape = values["shape"]
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    shape = tuple(_expr(node, s, f"{name}: each extent of the shape") for s in shape)
    dtype = str(values.get("dtype", "float32"))
    if not dtype.startswith(("int", "uint", "float", "bool")):
        raise fail(node, f"{name}: the dtype must be an int, uint, float or bool type, "
                         f"got {dtype!r}")
    scope = values.get("scope", "global" if name == "allocate" else "output")
    if not isinstance(scope, str):
        raise fail(node, f"{name}: the scope must be a string such as 'global', 'shared' or "
                         "'local'")
    return Allocation(shape, str(as_dtype(dtype)), scope)


def _len(node, args, kwargs):
    _arity(node, args, 1, 1)
    x = args[0]
    if isinstance(x, Tensor):
        if x.ndim != 1:
            raise fail(node, f"len of tensor '{x.name}', which has {x.ndim} dimensions; "
                             "use its .shape")
        return x.shape[0]
    try:
        return E.const(len(x))
    except TypeError:
        raise fail(node, f"len of {x!r}, which has no length") from None


def _min_max(node, args, kwargs):
    _arity(node, args, 2, 2)
    cls = E.Min if node.func.id == "min" else E.Max
    return E.binary(cls, _expr(node, args[0], "an operand"), _expr(node, args[1], "an operand"))


def _math(node, args, kwargs):
    name = node.func.id
    fn = getattr(intrin, name)
    _arity(node, args, 2 if name == "power" else 1, 2 if name == "power" else 1)
    return fn(*[_expr(node, a, f"the argument of {name}") for a in args])


def _popcount(node, args, kwargs):
    _arity(node, args, 1, 1)
    x = _expr(node, args[0], "the argument of popcount")
    if not x.dtype.is_integer:
        raise fail(node, f"popcount counts the bits of an integer, got {x.dtype}")
    return E.Call(x.dtype, "tir.popcount", (x,))


def _cast(node, args, kwargs):
    _arity(node, args, 1, 1)
    return E.cast(node.func.id, _expr(node, args[0], f"the value cast to {node.func.id}"))


def _ceil_div(node, args, kwargs):
    _arity(node, args, 2, 2)
    a, b = (_expr(node, x, "an operand of ceil_div") for x in args)
    return simplify(E.binary(E.FloorDiv, a + b - 1, b))


def _likely(node, args, kwargs):
    _arity(node, args, 1, 1)
    return tir_likely(_expr(node, args[0], "the condition of likely"))


def _max_num_threads(node, args, kwargs):
    _arity(node, args, 0, 1)
    target = Target.current(True)
    if target is None:
        raise fail(node, "max_num_threads: no target is current; parse the script inside "
                         "`with tvm.target.Target(...)`")
    return E.const(int(target.max_num_threads))


def _inf(node, args, kwargs):
    _arity(node, args, 1, 1)
    dtype = str(args[0])
    return intrin.max_value(dtype) if node.func.id == "inf" else intrin.min_value(dtype)


CALLS: Dict[str, Callable] = {
    "allocate": _allocate,
    "output_tensor": _allocate,
    "len": _len,
    "min": _min_max,
    "max": _min_max,
    "popcount": _popcount,
    "ceil_div": _ceil_div,
    "likely": _likely,
    "max_num_threads": _max_num_threads,
    "inf": _inf,
    "ninf": _inf,
    **{n: _math for n in ("sqrt", "rsqrt", "log", "exp", "tanh", "sigmoid", "power", "round",
                          "floor", "ceil", "fabs", "sin", "cos", "erf")},
    **{n: _cast for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "float32", "float64")},
}
