"""Converters of ONNX operators, one file per family. `CONVERTERS[op_type](ctx)` returns the
node's outputs as graph-level expressions (one, or a list; None for an output it does not
compute). A converter reads the node through its `NodeContext` (common.py)."""
# the families register their converters when imported
from . import (  # noqa: F401
    constant,
    control_flow,
    einsum,
    elementwise,
    image,
    indexing,
    nn,
    quantize,
    recurrent,
    reduce,
    symbolic,
    tensor,
)
from .common import CONVERTERS, NodeContext, Value, dtype_of_elem_type
from .quantize import CONTRIB_OPS

__all__ = ["CONTRIB_OPS", "CONVERTERS", "NodeContext", "Value", "dtype_of_elem_type", "symbolic"]
