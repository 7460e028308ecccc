"""Code a schedule imports into the library it is built into, through pragmas on a loop (as
TVM's "import_llvm"):

    s[C].pragma(axis, "import_llvm", ll_text)   # LLVM IR text (compiler.contrib.clang)
    s[C].pragma(axis, "import_c", c_source)     # C99 source text

Typically the micro-kernel a tensorized stage calls with tir.call_extern. On the llvm target
LLVM IR is linked into the generated module (so LLVM may inline it), on the c target it is
compiled by clang (`-x ir`) into an object; C source is compiled by the system C compiler with
the target's flags on both targets. Objects are merged into the host object (`cc -r`), so every
output of export_library carries them.
"""
from __future__ import annotations

import os
from typing import List, Sequence, Tuple

from ..contrib.cc import compile_source, create_relocatable, run_command
from ..contrib.clang import find_clang
from ..ir.errors import BuildError
from ..tir import expr as E
from ..tir.functor import post_order_visit
from ..tir.stmt import AttrStmt

IMPORT_LLVM, IMPORT_C = "pragma_import_llvm", "pragma_import_c"


def collect_imports(mod) -> List[Tuple[str, str]]:
    """The (kind, text) of every import pragma in `mod` ("llvm" or "c"), each once, in order."""
    found: List[Tuple[str, str]] = []

    def visit(n):
        if isinstance(n, AttrStmt) and n.key in (IMPORT_LLVM, IMPORT_C):
            if not isinstance(n.value, E.StringImm):
                raise BuildError(f"pragma {n.key[len('pragma_'):]!r} needs the code as a str, "
                                 f"got {n.value}")
            item = ("llvm" if n.key == IMPORT_LLVM else "c", n.value.value)
            if item not in found:
                found.append(item)

    for _, func in mod.items():
        post_order_visit(func.body, visit)
    return found


def compile_imports(imports: Sequence[Tuple[str, str]], workdir: str,
                    c_flags: Sequence[str]) -> List[str]:
    """Objects compiled from `imports` under `workdir` (C with `c_flags`, LLVM IR by clang)."""
    objects = []
    for k, (kind, text) in enumerate(imports):
        src = os.path.join(workdir, f"import{k}.{'ll' if kind == 'llvm' else 'c'}")
        obj = os.path.join(workdir, f"import{k}.o")
        with open(src, "w") as f:
            f.write(text)
        if kind == "c":
            compile_source(src, obj, list(c_flags))
        else:
            run_command([find_clang()[0], "-c", "-fPIC", "-O2", "-x", "ir", src, "-o", obj])
        objects.append(obj)
    return objects


def link_imports(host_object: str, objects: Sequence[str], workdir: str) -> str:
    """`host_object` merged with `objects` into one relocatable object (or itself)."""
    if not objects:
        return host_object
    return create_relocatable(os.path.join(workdir, "host_with_imports.o"),
                              [host_object] + list(objects))
