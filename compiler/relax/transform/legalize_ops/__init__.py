"""How each graph-level operator becomes tensor expressions of the operator library (topi):
`LEGALIZE[op_name](call, args) -> te.Tensor | list`, where `args` are the call's arguments
as te tensors (tensor arguments), Python scalars (0-d constants, PrimValues) or tuples of
them. One file per operator family."""
from typing import Callable, Dict

from . import elementwise, manipulate, nn, reduce

LEGALIZE: Dict[str, Callable] = {}
for _family in (elementwise, manipulate, nn, reduce):
    LEGALIZE.update(_family.LEGALIZE)

__all__ = ["LEGALIZE"]
