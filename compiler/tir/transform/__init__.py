"""One pass per file; each exposes `pass_name(mod: IRModule) -> IRModule`.

`prim_func_pass` is here as in `tvm.tir.transform` (defined in compiler/transform.py)."""
from ...transform import prim_func_pass  # noqa: F401
