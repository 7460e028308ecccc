"""The global functions the compiler registers in the runtime's registry, as TVM's compiler
library registers its own, so that runtime code reaches compiler behaviour by name:

- `node._const(value, dtype)`: the IR constant of a Python number (dtype None: int32 or int64
  for ints, float32 for floats, bool for bools); `microruntime.convert` of a number uses it.
"""
from microruntime.packed_func import register_func

from .tir.expr import const

register_func("node._const", lambda value, dtype=None: const(value, dtype), override=True)
