"""Fusion patterns of operators, ordered as TVM's OpPatternKind. Each operator carries its
pattern: `register(..., pattern=...)` (registry.py) sets the op attribute "TOpPattern";
`op_pattern(call)` reads it (OPAQUE when absent, and for a call whose result is not one
tensor). A fused group's pattern is its strongest member."""
from __future__ import annotations

from ..expr import Call, Op
from ..struct_info import TensorStructInfo

ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_ELEMWISE_FUSABLE, OPAQUE = 0, 1, 2, 3, 4, 8

ATTR = "TOpPattern"


def pattern_of_op(name: str) -> int:
    """The fusion pattern of operator `name` (OPAQUE when it has none)."""
    return Op.get(name).get_attr(ATTR, OPAQUE)


def op_pattern(call: Call) -> int:
    """The fusion pattern of an operator call; tuple-valued results are opaque."""
    if not isinstance(call.op, Op) or not isinstance(call.struct_info, TensorStructInfo):
        return OPAQUE
    return call.op.get_attr(ATTR, OPAQUE)


__all__ = ["ATTR", "ELEMWISE", "BROADCAST", "INJECTIVE", "COMM_REDUCE", "OUT_ELEMWISE_FUSABLE",
           "OPAQUE", "op_pattern", "pattern_of_op"]
