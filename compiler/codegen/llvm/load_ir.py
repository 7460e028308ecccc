"""Loading a saved LLVM module (`m.save("k.ll")` or `"k.bc"`) back as a runtime module: the IR
(text or bitcode) is parsed, verified, compiled for this machine, linked and loaded, as
`load_module("k.o")` would load the object of the same module."""
import os
import tempfile

import llvmlite.binding as llvm

import microruntime

from ...ir.errors import BuildError, TargetError
from ...target import Target
from ...target.triple import normalize_triple
from .codegen import create_target_machine, emit


def _parse(path: str, fmt: str) -> llvm.ModuleRef:
    with open(path, "rb") as f:
        data = f.read()
    try:
        if fmt == "bc":
            module = llvm.parse_bitcode(data)
        else:
            module = llvm.parse_assembly(data.decode("utf-8"))
        module.verify()
    except (RuntimeError, UnicodeDecodeError) as err:
        raise BuildError(f"cannot load {path!r}: not a valid LLVM "
                         f"{'bitcode' if fmt == 'bc' else 'IR'} module ({err})") from None
    return module


def load_llvm_ir_file(path: str, fmt: str = "") -> microruntime.Module:
    """The runtime module of the LLVM IR file `path` (`fmt` "ll" for text, "bc" for bitcode;
    default: its extension). The module must be for this machine's triple."""
    path = os.fspath(path)
    fmt = fmt or path.rsplit(".", 1)[-1]
    module = _parse(path, fmt)
    host = normalize_triple(llvm.get_process_triple())
    if module.triple and normalize_triple(module.triple) != host:
        raise TargetError(f"cannot load {path!r} here: it is for {module.triple}, this machine "
                          f"is {host}")
    tm = create_target_machine(Target("llvm"))
    with tempfile.TemporaryDirectory(prefix="kiln_ll_") as workdir:
        obj = os.path.join(workdir, os.path.basename(path).rsplit(".", 1)[0] + ".o")
        with open(obj, "wb") as f:
            f.write(emit(tm, module))
        return microruntime.load_module(obj)
