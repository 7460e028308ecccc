"""What importing a model can go wrong with, as CompilerErrors: a file that is not a model (or a
truncated one), a model that is not valid ONNX (a tensor defined twice, an unknown opset),
contradicts itself or lacks what the compiler needs (`ModelError`), and operators the importer
cannot handle (`UnsupportedOpError`: one line per operator with its node count, those on the
run-time path apart from those that only compute constants, and what to do)."""
from ..ir.errors import CompilerError, UnsupportedOpError


class ModelError(CompilerError):
    """The model cannot be read or compiled as given: a corrupt or truncated file, a value
    nothing defines or one defined twice, an opset newer than the frontend knows, an input
    without a shape, a dynamic value where a constant is needed.
    The message names the input or node and says what to give instead."""


__all__ = ["ModelError", "UnsupportedOpError"]
