"""How each graph-level operator becomes tensor expressions of the operator library (topi):
each family file's `LEGALIZE[op_name](call, args) -> te.Tensor | list` (`args` are the call's
arguments as te tensors, Python scalars (0-d constants, PrimValues) or tuples of them) is set
on its operator as the op attribute "FLegalize" here; the operator's strategy
(compiler/relax/strategy) computes with it unless it chooses among computes itself (conv2d).
One file per operator family."""
from ... import op as _op  # noqa: F401  (the operators exist before their attributes are set)
from ...expr import Op
from ...strategy.op_strategy import COMPUTE_ATTR as ATTR
from . import elementwise, manipulate, nn, qnn, reduce

for _family in (elementwise, manipulate, nn, qnn, reduce):
    for _name, _fn in _family.LEGALIZE.items():
        Op.register_attr(_name, ATTR, _fn)


__all__ = ["ATTR"]
