"""PrimFunc: one function of the loop IR (its IRModule is compiler.ir.IRModule)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from ..ir.dtype import handle
from ..ir.node import Node
from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


@dataclass(frozen=True, eq=False, slots=True)
class PrimFunc(Node):
    """`params` are Vars; a param in `buffer_map` is a tensor argument bound to that Buffer.

    As in TVM, a Buffer given in `params` (or an ir_builder pointer) becomes a handle Var of
    its name bound to it in `buffer_map`; `buffer_map` may be a dict and `attrs` None.

    Common attrs: "global_symbol" (the exported name), "target" (a Target), "tir.noalias",
    "calling_conv" ("default" before make_packed_api, "packed" after, "device_kernel" for GPU
    kernels).
    """

    params: Tuple[Var, ...]
    body: Stmt
    buffer_map: Tuple[Tuple[Var, Buffer], ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        params, bmap = [], list(dict(self.buffer_map).items() if isinstance(self.buffer_map, dict)
                                else self.buffer_map)
        for p in self.params:
            if hasattr(p, "asobject") and not isinstance(p, Var):  # ir_builder's BufferVar
                p = p.asobject()
            if isinstance(p, Buffer):
                var = Var(p.name, handle)
                bmap.append((var, p))
                p = var
            params.append(p)
        object.__setattr__(self, "params", tuple(params))
        object.__setattr__(self, "buffer_map", tuple(bmap))
        if self.attrs is None:
            object.__setattr__(self, "attrs", {})

    def buffer_of(self, param: Var) -> Optional[Buffer]:
        for p, b in self.buffer_map:
            if p is param:
                return b
        return None

    def with_body(self, body: Stmt) -> "PrimFunc":
        return PrimFunc(self.params, body, self.buffer_map, self.attrs)

    def with_attr(self, key: str, value: Any) -> "PrimFunc":
        attrs = dict(self.attrs)
        attrs[key] = value
        return PrimFunc(self.params, self.body, self.buffer_map, attrs)
