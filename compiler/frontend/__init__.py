"""Model importers: `from_onnx(model, shape=None, dtype="float32", opset=None) -> (mod, params)`
turns an ONNX model into a graph-level IRModule whose `main` takes the graph inputs then the
weights, and the weights by name (what `relay.build(mod, target, params)` takes)."""
from .errors import ModelError, UnsupportedOpError
from .onnx import from_onnx

__all__ = ["ModelError", "UnsupportedOpError", "from_onnx"]
