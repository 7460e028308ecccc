"""TVMScript, the Python-syntax form of the loop IR, as `tvm.script`.

`from compiler.script import tir as T` gives the `T` namespace: `@T.prim_func` reads the
decorated function's source with Python's `ast` and builds a `tir.PrimFunc` from it (parser.py);
the other names of `T` (buffers, loops, dtypes, intrinsics) are what the parsed body may call.
`func.script()` prints a PrimFunc back as TVMScript (printer.py). Loops, buffer loads and
stores, lets, ifs, allocations, thread launches, asserts, calls and TensorIR blocks (`T.block`,
`T.axis`, `T.reads`/`T.writes`, `T.init`, `T.alloc_buffer`, `T.block_attr`, `T.where`) are
read and printed; a construct outside them raises a RuntimeError (ScriptError) naming it.
"""
from ..tir.function import PrimFunc
from . import tir
from .parser import parse_source
from .printer import script


def from_source(text: str) -> PrimFunc:
    """The PrimFunc of TVMScript text (as `func.script()` prints it), as tvm.script.from_source.
    """
    return parse_source(text, tir)


def _prim_func_script(self, name: str = "") -> str:
    """This function as TVMScript text (compiler/script/printer.py)."""
    return script(self, name)


# The loop IR sits below this package, so the printing method of PrimFunc is attached here.
PrimFunc.script = _prim_func_script
