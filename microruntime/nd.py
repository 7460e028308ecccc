"""microruntime.nd: array creation (TVM's tvm.nd / tvm.runtime.ndarray)."""
from .ndarray import NDArray, array, empty, from_dlpack

__all__ = ["NDArray", "array", "empty", "from_dlpack"]
