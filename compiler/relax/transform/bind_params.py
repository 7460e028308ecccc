"""bind_params: weights given by name become constants of the function.

before: `main(x, w1, b1, ...)` with weights as parameters.
after:  the parameters named in `params` are gone; their uses are Constants holding the given
        arrays (checked against the parameter's declared shape and dtype).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping

import numpy as np

from ...ir.errors import IRError, TypeInferenceError
from ...ir.module import IRModule
from .. import expr as X
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo


def _as_array(name: str, value: Any) -> np.ndarray:
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    return np.asarray(value)


def _check(param: X.Var, data: np.ndarray) -> None:
    s = param.struct_info
    if not isinstance(s, TensorStructInfo):
        return
    if s.dtype != "void" and s.dtype != str(data.dtype):
        raise TypeInferenceError(f"bind_params: parameter {param.name_hint!r} is declared "
                                 f"{s.dtype} but the given array is {data.dtype}")
    if s.shape is not None and s.is_static and tuple(s.shape) != data.shape:
        raise TypeInferenceError(f"bind_params: parameter {param.name_hint!r} is declared with "
                                 f"shape {tuple(s.shape)} but the given array has {data.shape}")


class _Binder(ExprMutator):
    def __init__(self, values: Dict[int, X.Constant]):
        super().__init__()
        self.values = values

    def visit_var_(self, v: X.Var) -> X.Expr:
        c = self.values.get(id(v))
        return c if c is not None else super().visit_var_(v)


def bind_params(mod: IRModule, params: Mapping[str, Any], func_name: str = "main") -> IRModule:
    """`mod` with the parameters of `func_name` that `params` names replaced by constants."""
    if not params:
        return mod
    func = mod[func_name]
    by_name = {}
    for p in func.params:
        if p.name_hint in by_name:
            raise IRError(f"bind_params: {func_name} has two parameters named {p.name_hint!r}; "
                          "rename one so weights can be bound by name")
        by_name[p.name_hint] = p
    unknown = sorted(set(params) - set(by_name))
    if unknown:
        raise IRError(f"bind_params: {unknown} are not parameters of {func_name} (it has "
                      f"{list(by_name)})")
    values = {}
    for name, value in params.items():
        data = _as_array(name, value)
        _check(by_name[name], data)
        values[id(by_name[name])] = X.Constant(data)
    body = _Binder(values).visit_expr(func.body)
    kept = tuple(p for p in func.params if id(p) not in values)
    attrs = dict(func.attrs)
    if "num_input" in attrs:
        attrs["num_input"] = min(attrs["num_input"], len(kept))
    new = X.Function(kept, body, func.ret_struct_info, func.is_pure, attrs)
    functions = dict(mod.functions)
    functions[func_name] = new
    return mod.with_functions(functions)
