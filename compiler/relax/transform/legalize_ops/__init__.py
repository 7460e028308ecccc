"""How each graph-level operator becomes tensor expressions of the operator library (topi):
each family file's `LEGALIZE[op_name](call, args) -> te.Tensor | list` (`args` are the call's
arguments as te tensors, Python scalars (0-d constants, PrimValues) or tuples of them) is set
on its operator as the op attribute "FLegalize" here, where `compute_of(call)` reads it. One
file per operator family."""
from typing import Callable, Optional

from ... import op as _op  # noqa: F401  (the operators exist before their attributes are set)
from ...expr import Call, Op
from . import elementwise, manipulate, nn, reduce

ATTR = "FLegalize"

for _family in (elementwise, manipulate, nn, reduce):
    for _name, _fn in _family.LEGALIZE.items():
        Op.register_attr(_name, ATTR, _fn)


def compute_of(call: Call) -> Optional[Callable]:
    """The compute of an operator call (None: the operator has no kernel)."""
    return call.op.get_attr(ATTR) if isinstance(call.op, Op) else None


__all__ = ["ATTR", "compute_of"]
