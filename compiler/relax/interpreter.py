"""A reference interpreter of the graph level: evaluates a function on numpy inputs.

    from compiler.relax import interpreter
    out = interpreter.run(mod, x, w)                  # mod["main"](x, w)
    out = interpreter.run(mod, x, func_name="f")
    out = interpreter.run(func, x)                    # a Function alone

Every operator of `relax.op` runs as a numpy kernel (interpreter_ops.py, interpreter_nn.py);
calls of module functions (GlobalVar), local functions (closures), If, match_cast and symbolic
shapes are evaluated; `call_tir` runs the loop-IR PrimFunc with the loop-IR interpreter, so a
module before and after legalization can be compared. Arguments are checked against the
parameters' struct info (dtype, rank, static dims; symbolic dims are bound on first use and
checked after). Results: numpy arrays, tuples of results, shapes as tuples of ints, scalars.

It is the oracle for model tests and what constant folding evaluates with.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from ..arith import simplify
from ..ir.errors import IRError
from ..ir.module import IRModule
from ..tir import expr as E
from ..tir import interpreter as tir_interpreter
from ..tir.function import PrimFunc
from ..tir.functor import collect_vars, substitute
from . import expr as X
from . import interpreter_nn, interpreter_qnn  # noqa: F401 - register the nn, image, qnn kernels
from .interpreter_ops import KERNELS
from .struct_info import (
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


class ShapeValue(tuple):
    """A shape value at run time (a tuple of ints)."""


class Closure:
    """A local function value with the variables it captured."""

    def __init__(self, func: X.Function, env: Dict[int, Any], sym: Dict[int, int]):
        self.func, self.env, self.sym = func, env, sym


class Interpreter:
    """Evaluates the functions of one module."""

    def __init__(self, mod: IRModule):
        self.mod = mod

    def __call__(self, func_name: str, *args: Any) -> Any:
        if func_name not in self.mod:
            raise IRError(f"the module has no function {func_name!r}; it has "
                          f"{sorted(self.mod.functions)}")
        return self.call(self.mod[func_name], list(args), {}, {}, func_name)

    # ---- calls -------------------------------------------------------------------------------
    def call(self, func: Any, args: List[Any], env: Dict[int, Any], sym: Dict[int, int],
             name: str) -> Any:
        if isinstance(func, PrimFunc):
            raise IRError(f"{name} is a loop-IR PrimFunc: call it through call_tir")
        if not isinstance(func, X.Function):
            raise IRError(f"cannot call {func!r}")
        if len(args) != len(func.params):
            raise IRError(f"{name} takes {len(func.params)} arguments "
                          f"({', '.join(p.name_hint for p in func.params)}), got {len(args)}")
        env, sym = dict(env), dict(sym)
        for p, a in zip(func.params, args):
            a = _as_value(a)
            _match(p.struct_info, a, sym, f"{name}: argument {p.name_hint!r}")
            env[id(p)] = a
        return self.eval(func.body, env, sym)

    # ---- expressions -------------------------------------------------------------------------
    def eval(self, e: X.Expr, env: Dict[int, Any], sym: Dict[int, int]) -> Any:
        if isinstance(e, X.Var):
            if id(e) not in env:
                raise IRError(f"variable {e.name_hint!r} is used before it is bound")
            return env[id(e)]
        if isinstance(e, X.Constant):
            return e.data
        if isinstance(e, X.ShapeExpr):
            return ShapeValue(_dim(d, sym) for d in e.values)
        if isinstance(e, X.PrimValue):
            v = e.value
            return _dim(v, sym) if isinstance(v, E.PrimExpr) else v
        if isinstance(e, (X.StringImm, X.DataTypeImm)):
            return e.value
        if isinstance(e, X.Tuple):
            return tuple(self.eval(f, env, sym) for f in e.fields)
        if isinstance(e, X.TupleGetItem):
            return self.eval(e.tuple_value, env, sym)[e.index]
        if isinstance(e, X.SeqExpr):
            return self.seq(e, env, sym)
        if isinstance(e, X.If):
            cond = self.eval(e.cond, env, sym)
            branch = e.true_branch if bool(np.asarray(cond)) else e.false_branch
            return self.eval(branch, env, sym)
        if isinstance(e, X.Function):
            return Closure(e, env, sym)
        if isinstance(e, (X.GlobalVar, X.ExternFunc, X.Op)):
            return e
        if isinstance(e, X.Call):
            return self.eval_call(e, env, sym)
        raise IRError(f"interpreter: cannot evaluate {type(e).__name__}")

    def seq(self, e: X.SeqExpr, env: Dict[int, Any], sym: Dict[int, int]) -> Any:
        env = dict(env)
        for block in e.blocks:
            for b in block.bindings:
                value = self.eval(b.value, env, sym)
                if isinstance(b, X.MatchCast):
                    _match(b.struct_info, value, sym, f"match_cast to {b.var.name_hint!r}")
                env[id(b.var)] = value
        return self.eval(e.body, env, sym)

    def eval_call(self, c: X.Call, env: Dict[int, Any], sym: Dict[int, int]) -> Any:
        op = c.op
        if isinstance(op, X.Op):
            if op.name in ("relax.call_tir", "relax.call_dps_packed"):
                return self.call_tir(c, env, sym)
            args = [self.eval(a, env, sym) for a in c.args]
            if op.name == "relax.shape_of":
                return ShapeValue(args[0].shape)
            kernel = KERNELS.get(op.name)
            if kernel is None:
                raise IRError(f"interpreter: no reference kernel for operator {op.name!r}")
            return kernel(c.attrs, *args)
        callee = self.eval(op, env, sym)
        args = [self.eval(a, env, sym) for a in c.args]
        if isinstance(callee, X.GlobalVar):
            return self.call(self.mod[callee.name_hint], args, {}, {}, callee.name_hint)
        if isinstance(callee, Closure):
            return self.call(callee.func, args, callee.env, callee.sym, "closure")
        raise IRError(f"interpreter: cannot call {callee!r}")

    def call_tir(self, c: X.Call, env: Dict[int, Any], sym: Dict[int, int]) -> Any:
        gv = c.args[0]
        if not isinstance(gv, X.GlobalVar) or not isinstance(self.mod.functions.get(
                gv.name_hint), PrimFunc):
            raise IRError(f"interpreter: call_tir of {gv}, which is not a PrimFunc of the module")
        func = self.mod[gv.name_hint]
        inputs = list(self.eval(c.args[1], env, sym))
        out_sinfo = c.sinfo_args[0]
        outs_sinfo = out_sinfo.fields if isinstance(out_sinfo, TupleStructInfo) else (out_sinfo,)
        outs = [np.zeros(tuple(_dim(d, sym) for d in s.shape), s.dtype) for s in outs_sinfo]
        extra = list(self.eval(c.args[2], env, sym)) if len(c.args) > 2 else []
        tir_interpreter.run(func, *inputs, *outs, *extra)
        return tuple(outs) if isinstance(out_sinfo, TupleStructInfo) else outs[0]


def _as_value(a: Any) -> Any:
    if isinstance(a, (list, tuple)) and not isinstance(a, ShapeValue):
        return tuple(_as_value(x) for x in a)
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        return np.asarray(a.numpy())
    return a


def _dim(d: Any, sym: Dict[int, int]) -> int:
    if isinstance(d, int):
        return d
    vmap = {v: E.const(sym[id(v)], v.dtype) for v in collect_vars(d) if id(v) in sym}
    value = simplify(substitute(d, vmap))
    if not isinstance(value, E.IntImm):
        raise IRError(f"symbolic dim {d} is not bound (bind it through a parameter's shape or "
                      "match_cast)")
    return int(value.value)


def _match_dims(dims, actual, sym: Dict[int, int], where: str) -> None:
    for i, (d, a) in enumerate(zip(dims, actual)):
        if isinstance(d, E.Var) and id(d) not in sym:
            sym[id(d)] = int(a)
            continue
        want = _dim(d, sym)
        if want != a:
            raise IRError(f"{where}: dim {i} is {a} but {d} = {want} was expected")


def _match(s: StructInfo, value: Any, sym: Dict[int, int], where: str) -> None:
    """Checks `value` against struct info `s`, binding symbolic dims seen for the first time."""
    if isinstance(s, ObjectStructInfo):
        return
    if isinstance(s, TensorStructInfo):
        if not isinstance(value, np.ndarray):
            if isinstance(value, np.generic):
                value = np.asarray(value)
            else:
                raise IRError(f"{where}: expected a tensor, got {type(value).__name__}")
        if s.dtype != "void" and str(value.dtype) != s.dtype:
            raise IRError(f"{where}: dtype is {value.dtype} but {s.dtype} was expected")
        if s.ndim >= 0 and value.ndim != s.ndim:
            raise IRError(f"{where}: has {value.ndim} dims {value.shape} but {s.ndim} were "
                          "expected")
        if s.shape is not None:
            _match_dims(s.shape, value.shape, sym, where)
        return
    if isinstance(s, TupleStructInfo):
        if not isinstance(value, tuple) or len(value) != len(s.fields):
            raise IRError(f"{where}: expected a tuple of {len(s.fields)} values")
        for i, (f, v) in enumerate(zip(s.fields, value)):
            _match(f, v, sym, f"{where}[{i}]")
        return
    if isinstance(s, ShapeStructInfo):
        if s.values is not None:
            if len(value) != len(s.values):
                raise IRError(f"{where}: expected a shape of {len(s.values)} dims")
            _match_dims(s.values, value, sym, where)
        return
    if isinstance(s, PrimStructInfo) and isinstance(s.value, E.Var) and id(s.value) not in sym:
        sym[id(s.value)] = int(value)


def run(mod: Any, *args: Any, func_name: str = "main") -> Any:
    """Evaluates `mod[func_name](*args)` (or a Function alone) on numpy arrays."""
    if isinstance(mod, X.Function):
        mod = IRModule({func_name: mod})
    if not isinstance(mod, IRModule):
        raise IRError(f"interpreter.run: expected an IRModule or a Function, got {mod!r}")
    return Interpreter(mod)(func_name, *args)


def evaluate(expr: X.Expr, bindings: Optional[Dict[X.Var, Any]] = None,
             mod: Optional[IRModule] = None) -> Any:
    """The value of an expression whose free variables are given in `bindings` (what constant
    folding asks)."""
    env = {id(v): _as_value(a) for v, a in (bindings or {}).items()}
    return Interpreter(mod or IRModule({})).eval(expr, env, {})
