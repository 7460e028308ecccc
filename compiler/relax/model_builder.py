"""ModelBuilder: a small builder for writing whole models by hand, in one dataflow block.

    mb = relax.ModelBuilder("main")
    x = mb.input("x", (1, 784))
    w = mb.weight("w", np.random.rand(10, 784).astype("float32"))
    y = mb.emit(relax.op.nn.softmax(relax.op.linear(x, w)))
    mod, params = mb.build(y)

Inputs come first among the function's parameters, then the weights (`attrs["num_input"]` says
how many inputs, as TVM's frontends do); `params` maps each weight's name to its array, the
form `relay.build(mod, target, params)` takes. `const` embeds an array in the graph instead.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..ir.errors import IRError
from ..ir.module import IRModule
from .block_builder import BlockBuilder
from .expr import Constant, Expr, Var, const
from .struct_info import TensorStructInfo


class ModelBuilder:
    def __init__(self, name: str = "main"):
        self.name = name
        self._bb = BlockBuilder()
        self._inputs: List[Var] = []
        self._weights: List[Var] = []
        self.params: Dict[str, np.ndarray] = {}
        self._bb.begin_function(name, None, {"global_symbol": name})
        self._bb.begin_dataflow_block()
        self._built = False

    def input(self, name: str, shape: Sequence[Any], dtype: str = "float32") -> Var:
        """A model input (dims may be symbolic tir Vars)."""
        if self._weights:
            raise IRError(f"input {name!r} after weights: declare every input first")
        v = Var(name, TensorStructInfo(tuple(shape), dtype))
        self._inputs.append(v)
        return v

    def weight(self, name: str, value: np.ndarray) -> Var:
        """A weight: a parameter after the inputs, whose value goes to `params`."""
        if name in self.params or any(v.name_hint == name for v in self._inputs):
            raise IRError(f"parameter name {name!r} is used twice")
        value = np.asarray(value)
        v = Var(name, TensorStructInfo(value.shape, str(value.dtype)))
        self._weights.append(v)
        self.params[name] = value
        return v

    def const(self, value: Any, dtype: Optional[str] = None) -> Constant:
        """A constant embedded in the graph."""
        return const(value, dtype)

    def emit(self, expr: Expr, name: str = "") -> Var:
        """Binds `expr` (nested calls are bound first) and returns its variable."""
        return self._bb.emit(expr, name)

    def build(self, *outputs: Expr) -> Tuple[IRModule, Dict[str, np.ndarray]]:
        """Ends the function with `outputs` (one, or a tuple of several) and returns the module
        and the weights."""
        if self._built:
            raise IRError("ModelBuilder.build() was already called")
        if not outputs:
            raise IRError("build() needs at least one output")
        self._built = True
        outs = [self._bb.emit_output(o) for o in outputs]
        self._bb.end_block()
        result = outs[0] if len(outs) == 1 else list(outs)
        self._bb.set_function_attr("num_input", len(self._inputs))
        self._bb.emit_func_output(result, self._inputs + self._weights)
        return self._bb.get(), dict(self.params)
