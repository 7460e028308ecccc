"""Hybrid script (TVM's `te.hybrid`): a subset of Python that is both runnable on numpy arrays
and parsed into a tensor operation whose loops a schedule can rearrange.

    @te.hybrid.script
    def outer(a, b):
        c = output_tensor((a.shape[0], b.shape[0]), a.dtype)
        for i in range(a.shape[0]):
            for j in range(b.shape[0]):
                c[i, j] = a[i] * b[j]
        return c

    c = outer(A, B)              # tensors: a HybridOp's output, for te.create_schedule
    ref = outer(np_a, np_b)      # numpy arrays: runs as Python

`te.hybrid.build(s, inputs, outputs)` writes a schedule back as a hybrid script (a
HybridModule: run it, save it, load it, call it on tensors again).

Files: script.py (the decorator), parser.py (Python's AST -> the op's statement), usage.py
(declarations and uses of names), calls.py (the functions a script calls), runtime.py (running
as Python), dump.py (loop IR -> hybrid source), module.py (HybridModule and build). The
operation itself is compiler/te/hybrid_op.py, its lowering compiler/te/hybrid_stmt.py.
"""
from . import runtime  # noqa: F401
from .module import HybridModule, build  # noqa: F401
from .script import script  # noqa: F401
