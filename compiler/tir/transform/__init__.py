"""One pass per file; each exposes `pass_name(mod: IRModule) -> IRModule`.

`prim_func_pass` is here as in `tvm.tir.transform` (defined in compiler/tir/prim_func_pass.py)."""
from ..prim_func_pass import PrimFuncPass, prim_func_pass  # noqa: F401
