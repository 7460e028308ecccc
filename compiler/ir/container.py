"""The containers IR functions return and take, as `tvm.ir.container` names them: Array and
Map are the runtime's (compiler-built maps key IR nodes by identity)."""
from microruntime.object_generic import Array, Map

__all__ = ["Array", "Map"]
