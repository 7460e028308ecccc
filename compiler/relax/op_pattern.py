"""Fusion patterns of operators, ordered as TVM's OpPatternKind: each operator carries its
pattern as the op attribute "TOpPattern"; `op_pattern(call)` reads it (OPAQUE when absent, and
for a call whose result is not one tensor). A fused group's pattern is its strongest member."""
from __future__ import annotations

from . import expr as X
from . import op as _op  # noqa: F401  (the operators must exist before their attrs are set)
from .struct_info import TensorStructInfo

ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_ELEMWISE_FUSABLE, OPAQUE = 0, 1, 2, 3, 4, 8

ATTR = "TOpPattern"

_ELEMWISE = """abs ceil cos erf exp floor isnan log logical_not negative round rsqrt sigmoid sign
sin sqrt square tan tanh astype clip nn.relu nn.leakyrelu nn.gelu nn.gelu_tanh nn.silu"""
_BROADCAST = """add subtract multiply divide power maximum minimum floor_divide floor_mod mod
equal not_equal greater greater_equal less less_equal logical_and logical_or logical_xor where
nn.prelu"""
_INJECTIVE = """reshape flatten permute_dims expand_dims squeeze broadcast_to concat strided_slice
take nn.pad image.resize2d zeros_like ones_like full_like layout_transform"""
_REDUCE = "sum mean max min prod argmax argmin variance std"
_ANCHOR = """nn.conv2d nn.conv2d_transpose nn.dense matmul nn.max_pool2d nn.avg_pool2d
nn.adaptive_avg_pool2d nn.adaptive_max_pool2d nn.contrib_conv2d_winograd_without_weight_transform
nn.conv3d nn.max_pool3d nn.avg_pool3d nn.adaptive_avg_pool3d nn.adaptive_max_pool3d"""

for _names, _kind in ((_ELEMWISE, ELEMWISE), (_BROADCAST, BROADCAST), (_INJECTIVE, INJECTIVE),
                      (_REDUCE, COMM_REDUCE), (_ANCHOR, OUT_ELEMWISE_FUSABLE)):
    for _n in _names.split():
        X.Op.register_attr("relax." + _n, ATTR, _kind)


def pattern_of_op(name: str) -> int:
    """The fusion pattern of operator `name` (OPAQUE when it has none)."""
    return X.Op.get(name).get_attr(ATTR, OPAQUE)


def op_pattern(call: X.Call) -> int:
    """The fusion pattern of an operator call; tuple-valued results are opaque."""
    if not isinstance(call.op, X.Op) or not isinstance(call.struct_info, TensorStructInfo):
        return OPAQUE
    return call.op.get_attr(ATTR, OPAQUE)


__all__ = ["ELEMWISE", "BROADCAST", "INJECTIVE", "COMM_REDUCE", "OUT_ELEMWISE_FUSABLE", "OPAQUE",
           "op_pattern", "pattern_of_op"]
