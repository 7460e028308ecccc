"""split_args: concatenations of more tensors than a kernel of the target can take are split
(TVM's SplitArgs).

before: graph-level functions in A-normal form, before fuse_ops.
after:  for a target with `max_function_args` (Metal; Vulkan, whose shaders bind a bounded
        number of storage buffers), a `concat` of more than `max_function_args - 1` tensors
        (one argument is the result) is a concat of concats, each of at most that many; the
        partial results are bound to variables first. Other targets: unchanged.

The limit is the device's: a Vulkan shader that binds more storage buffers than
maxPerStageDescriptorStorageBuffers does not run (lavapipe allows 32). A recurrent layer
unrolled for a GPU concatenates one state per time step and direction, often more.
"""
from __future__ import annotations

from typing import List, Optional

from ...ir.module import IRModule
from ...target import Target
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from .graph_functions import map_graph_functions


def max_function_args(target) -> Optional[int]:
    """The most arguments a kernel of `target` (a Target, its string or None) may take, or
    None where there is no limit."""
    if target is None:
        return None
    t = target if isinstance(target, Target) else Target(target)
    limit = t.get("max_function_args")
    return int(limit) if limit else None


class _Split(ExprMutator):
    def __init__(self, most_inputs: int):
        super().__init__()
        self.most = most_inputs

    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        if isinstance(value, X.Call) and isinstance(value.op, X.Op) and \
                value.op.name == "relax.concat" and isinstance(value.args[0], X.Tuple):
            fields = list(value.args[0].fields)
            axis = value.attrs.axis
            while len(fields) > self.most:
                fields = self._partials(fields, axis)
            value = R.concat(fields, axis=axis)
        self.append_rebound(b, value)

    def _partials(self, fields: List[X.Expr], axis: int) -> List[X.Expr]:
        out = []
        for k in range(0, len(fields), self.most):
            part = fields[k:k + self.most]
            out.append(part[0] if len(part) == 1 else self.emit(R.concat(part, axis=axis),
                                                                "concat_part"))
        return out


def split_args(mod: IRModule, target=None) -> IRModule:
    """`mod` with every concat of more tensors than a kernel of `target` can take split (see
    the module docstring)."""
    limit = max_function_args(target)
    if limit is None:
        return mod
    if limit < 3:
        raise ValueError(f"max_function_args={limit}: a kernel needs at least 3 arguments")
    return map_graph_functions(mod, lambda f: _Split(limit - 1).visit_expr(f))


__all__ = ["max_function_args", "split_args"]
