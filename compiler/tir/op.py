"""Loop-IR expressions a user writes by hand, with the names of `tvm.tir.op`: packed, extern,
intrinsic and LLVM-intrinsic calls, and the integer division family (`floordiv`, `truncdiv`,
`indexdiv`, ...).

The division functions take expressions or Python numbers; when both operands are constants
the result is folded to a constant, as TVM folds them."""
from __future__ import annotations

import builtins
from functools import reduce

from ..ir.dtype import DType, as_dtype, int32
from ..ir.errors import IRError
from . import expr as E
from .buffer import Buffer
from .const_fold import fold
from .intrinsics import INTRINSICS


def call_packed(name: str, *args) -> E.Call:
    """`tir.call_packed(name, args...)`: at run time, calls the function `name` found through
    the library context (the module's imports, then the global registry), e.g. one registered
    with `microruntime.register_func`. The value is the int32 status (a failure returns its
    status from the calling kernel at once). A Buffer argument passes a DLTensor* describing it
    (on the function's device, compact, byte_offset 0); ints go as Int, floats as Float, str as
    a C string, handles as DLTensor*."""
    if not isinstance(name, str) or not name:
        raise IRError(f"call_packed needs the function name as a non-empty str, got {name!r}")
    converted = tuple(a if isinstance(a, Buffer) else E.convert(a) for a in args)
    return E.Call(int32, "tir.call_packed", (E.StringImm(name),) + converted)


# ---- calls ----------------------------------------------------------------------------------
def call_intrin(dtype, func_name: str, *args) -> E.Call:
    """A call of the intrinsic `func_name` ("tir.exp", "tir.fabs", ... : an entry of
    compiler/tir/intrinsics.py) returning `dtype`, as `tvm.tir.call_intrin`."""
    if func_name not in INTRINSICS:
        hint = f"; did you mean 'tir.{func_name}'?" if f"tir.{func_name}" in INTRINSICS else \
            "; the known ones are listed in compiler/tir/intrinsics.py"
        raise IRError(f"call_intrin: '{func_name}' is not an intrinsic{hint}")
    arity = INTRINSICS[func_name][0]
    if arity is not None and arity != len(args):
        raise IRError(f"call_intrin: '{func_name}' takes {arity} arguments, got {len(args)}")
    return E.Call(as_dtype(dtype), func_name, tuple(E.convert(a) for a in args))


# The dtype of a call that returns nothing (`call_llvm_intrin("", ...)`): a handle of 0 bits.
VOID = DType(3, 0, 1)


def is_void(dtype) -> bool:
    """Whether `dtype` is the VOID of a call returning nothing."""
    return isinstance(dtype, DType) and dtype.is_handle and dtype.bits == 0


def _llvm_intrin(op: str, dtype, name, args) -> E.Call:
    if isinstance(name, str):
        from ..target.llvm_intrinsics import lookup_id

        ident = lookup_id(name)
        if ident == 0:
            raise IRError(f"{op[4:]}: {name!r} is not an intrinsic of this LLVM; names look like "
                          "'llvm.fma' or 'llvm.x86.sse2.pmadd.wd'")
    else:
        ident = int(getattr(name, "value", name))
    if not args or not isinstance(E.convert(args[0]), E.IntImm):
        raise IRError(f"{op[4:]}({name!r}, ...): the first argument is the number of arguments "
                      "whose types select the overload (a constant, e.g. tir.const(1, 'uint32'))")
    ret = VOID if dtype in ("", "void", None) else as_dtype(dtype)
    converted = tuple(E.convert(a) for a in args)
    return E.Call(ret, op, (E.const(ident, "uint32"),) + converted)


def call_llvm_intrin(dtype, name, *args) -> E.Call:
    """A call of the LLVM intrinsic `name` (or its ID), as `tvm.tir.call_llvm_intrin`: `args`
    are the number of leading arguments whose types pick an overloaded intrinsic's version,
    then the arguments. dtype "" means the intrinsic returns nothing. Only the llvm target
    compiles it."""
    return _llvm_intrin("tir.call_llvm_intrin", dtype, name, args)


def call_llvm_pure_intrin(dtype, name, *args) -> E.Call:
    """`call_llvm_intrin` of an intrinsic without side effects."""
    return _llvm_intrin("tir.call_llvm_pure_intrin", dtype, name, args)


def if_then_else(cond, t, f) -> E.Call:
    """`t if cond else f`, evaluating only the taken side (`tvm.tir.if_then_else`)."""
    cond, t, f = E.convert(cond), E.convert(t), E.convert(f)
    if not cond.dtype.is_bool:
        raise IRError(f"if_then_else: the condition {cond} is not boolean")
    t, f = E.unify(t, f)
    return E.Call(t.dtype, "tir.if_then_else", (cond, t, f))


def likely(cond) -> E.Call:
    """`cond`, marked as the branch usually taken (`tvm.tir.likely`)."""
    cond = E.convert(cond)
    return E.Call(cond.dtype, "tir.likely", (cond,))


def _extern(op: str, what: str, dtype, func_name: str, args) -> E.Call:
    if not isinstance(func_name, str) or not func_name.isidentifier():
        raise IRError(f"{what}: the function name must be a C identifier such as 'fabsf', "
                      f"got {func_name!r}")
    converted = tuple(E.convert(a) for a in args)
    if dtype in ("", None):  # TVM's "void": a call made for its effect, its int32 value dropped
        dtype = int32
    return E.Call(as_dtype(dtype), op, (E.StringImm(func_name),) + converted)


def call_extern(dtype, func_name: str, *args) -> E.Call:
    """A call of the external C function `func_name` (from libm, libc or any library the
    program is linked with) returning `dtype`, as `tvm.tir.call_extern`: its arguments are
    passed with their own C types, so they must match the function's prototype (cast them)."""
    return _extern("tir.call_extern", "call_extern", dtype, func_name, args)


def call_pure_extern(dtype, func_name: str, *args) -> E.Call:
    """`call_extern` of a function without side effects (`tvm.tir.call_pure_extern`)."""
    return _extern("tir.call_pure_extern", "call_pure_extern", dtype, func_name, args)


# ---- division -------------------------------------------------------------------------------
def _folded(cls, a, b) -> E.PrimExpr:
    e = E.binary(cls, a, b)
    if isinstance(e.b, (E.IntImm, E.FloatImm)) and e.b.value == 0 \
            and isinstance(e.a, (E.IntImm, E.FloatImm)):
        raise IRError(f"division by zero in {e}")
    folded = fold(e)
    return e if folded is None else folded


def _integers(what: str, a, b) -> None:
    for x in (a, b):
        dtype = E.convert(x).dtype
        if not dtype.is_integer or dtype.is_bool:
            raise IRError(f"{what} needs integer operands, got {x} of dtype {dtype}; use div() "
                          "(true division) or floordiv() for floats")


def div(a, b):
    """`a / b` as C computes it: truncating for integers, true division for floats."""
    return _folded(E.Div, a, b)


def truncdiv(a, b):
    """The integer quotient rounded towards zero (C's `/`): truncdiv(-7, 2) == -3."""
    _integers("truncdiv", a, b)
    return _folded(E.Div, a, b)


def truncmod(a, b):
    """The remainder of truncdiv, with the sign of `a` (C's `%`): truncmod(-7, 2) == -1."""
    _integers("truncmod", a, b)
    return _folded(E.Mod, a, b)


def floordiv(a, b):
    """The quotient rounded towards minus infinity (Python's `//`): floordiv(-7, 2) == -4."""
    return _folded(E.FloorDiv, a, b)


def floormod(a, b):
    """The remainder of floordiv, with the sign of `b` (Python's `%`): floormod(-7, 2) == 1."""
    return _folded(E.FloorMod, a, b)


def indexdiv(a, b):
    """floordiv for index arithmetic (operands meant to be non-negative), as TVM's indexdiv."""
    _integers("indexdiv", a, b)
    return _folded(E.FloorDiv, a, b)


def indexmod(a, b):
    """floormod for index arithmetic (operands meant to be non-negative), as TVM's indexmod."""
    _integers("indexmod", a, b)
    return _folded(E.FloorMod, a, b)


# ---- tracing --------------------------------------------------------------------------------
DEFAULT_TRACE_ACTION = "tvm.default_trace_action"


def trace(args, trace_action: str = DEFAULT_TRACE_ACTION) -> E.Call:
    """`tvm.tir.trace`: at run time, calls the global function `trace_action` with `args`
    (expressions; the traced value last) and is the traced value, or what the function
    returned when it returned an Int or Float (converted to the traced value's dtype).
    The default action prints the arguments on one line; it is registered in this process
    when a trace names it."""
    if not isinstance(args, list) or not args:
        raise IRError(f"tir.trace takes a non-empty list of expressions, got {args!r}")
    if not isinstance(trace_action, str) or not trace_action:
        raise IRError(f"tir.trace needs the action's name as a str, got {trace_action!r}")
    values = tuple(E.convert(a) for a in args)
    if builtins.any(v.dtype.lanes > 1 or v.dtype.is_handle for v in values):
        raise IRError(f"tir.trace traces scalars, got {list(values)}")
    if trace_action == DEFAULT_TRACE_ACTION:
        _register_default_trace_action()
    return E.Call(values[-1].dtype, "tir.call_trace_packed",
                  (E.StringImm(trace_action),) + values)


def _print_trace(*values):
    print(" ".join(str(v) for v in values), flush=True)


def _register_default_trace_action() -> None:
    import microruntime  # the runtime registry holds global functions

    if microruntime.get_global_func(DEFAULT_TRACE_ACTION, allow_missing=True) is None:
        microruntime.register_func(DEFAULT_TRACE_ACTION, _print_trace)


# ---- logic ----------------------------------------------------------------------------------
def all(*conds):  # noqa: A001
    """The conjunction of boolean expressions (a list of them, or several arguments)."""
    conds = [E.convert(c) for c in (conds[0] if len(conds) == 1 and
                                    isinstance(conds[0], (list, tuple)) else conds)]
    return reduce(E.logical_and, conds) if conds else E.const(True)


def any(*conds):  # noqa: A001
    """The disjunction of boolean expressions."""
    conds = [E.convert(c) for c in (conds[0] if len(conds) == 1 and
                                    isinstance(conds[0], (list, tuple)) else conds)]
    return reduce(E.logical_or, conds) if conds else E.const(False)
