"""clang as TVM's `tvm.contrib.clang`: C/C++ source -> LLVM IR text, e.g. for a micro-kernel a
schedule imports with `s[C].pragma(axis, "import_llvm", ll_code)`.

    ll_code = clang.create_llvm(cc_code, output="kernel.ll")
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import List, Optional, Sequence, Union

from ..ir.errors import BuildError
from .cc import _listify, run_command

__all__ = ["create_llvm", "find_clang"]


def find_clang(required: bool = True) -> List[str]:
    """The clang commands found on PATH ($CLANG first, then clang, then versioned ones)."""
    names = [os.environ.get("CLANG")] if os.environ.get("CLANG") else []
    names += ["clang"] + [f"clang-{v}" for v in range(22, 10, -1)]
    found = [n for n in names if n and shutil.which(n)]
    if required and not found:
        raise BuildError("clang is not found on PATH (nor $CLANG); install clang to turn C/C++ "
                         "into LLVM IR")
    return found


def create_llvm(inputs: Union[str, Sequence[str]], output: Optional[str] = None,
                options=None, cc: Optional[str] = None) -> str:
    """Compiles C/C++ `inputs` (file paths, or source code: text that is not a file is written
    to a .cc file and compiled as C++) to LLVM IR with `clang -S -emit-llvm`; writes it to
    `output` (a temporary file when None) and returns the IR text. `-O2` unless `options` give
    an optimisation level."""
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    opts = _listify(options)
    if not any(o.startswith("-O") for o in opts):
        opts.append("-O2")
    with tempfile.TemporaryDirectory(prefix="kiln_clang_") as tmp:
        files = []
        for k, item in enumerate(inputs):
            if os.path.isfile(item):
                files.append(item)
                continue
            path = os.path.join(tmp, f"input{k}.cc")
            with open(path, "w") as f:
                f.write(item)
            files.append(path)
        out = output or os.path.join(tmp, "output.ll")
        cmd = _listify(cc or find_clang()[0]) + ["-S", "-emit-llvm", "-fPIC", "-o", out] + \
            files + opts
        run_command(cmd)
        with open(out) as f:
            return f.read()
