"""TVMScript, the Python-syntax form of the loop IR, as `tvm.script`.

`from compiler.script import tir as T` gives the `T` namespace: `@T.prim_func` reads the
decorated function's source with Python's `ast` and builds a `tir.PrimFunc` from it (parser.py);
the other names of `T` (buffers, loops, dtypes, intrinsics) are what the parsed body may call.
Only the non-block subset of TVMScript is read (loops, buffer loads and stores, lets, ifs,
allocations, thread launches, asserts, calls); a construct outside it raises a RuntimeError
naming it.
"""
from . import tir  # noqa: F401
