"""Drive the system C compiler, archiver and linker (like tvm.contrib.cc).

    create_shared("lib.so", ["a.o", "b.o"], options=["-O2"])   # cc -shared -fPIC ...
    create_staticlib("lib.a", ["a.o"])                          # ar rcs
    create_relocatable("all.o", ["a.o", "b.o"])                 # cc -r
    compile_source("k.c", "k.o", options=["-march=native"])     # cc -c -fPIC -std=c99 -O2
    fcompile = cross_compiler("aarch64-linux-gnu-", options=["-static-libgcc"])

`cc` defaults to $CC, else "cc"; `ar` to $AR, else "ar". Failures raise BuildError carrying the
command and its output.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import Callable, List, Optional, Sequence, Union

from ..ir.errors import BuildError

__all__ = ["archiver_for", "get_cc", "compile_source", "create_shared",
           "create_relocatable", "create_staticlib", "cross_compiler", "run_command"]


def get_cc() -> str:
    return os.environ.get("CC") or "cc"


def _listify(options: Union[None, str, Sequence[str]]) -> List[str]:
    if options is None:
        return []
    if isinstance(options, str):
        return shlex.split(options)
    return [str(o) for o in options]


def run_command(cmd: List[str], cwd: Optional[str] = None) -> str:
    """Runs `cmd`; returns its output or raises BuildError with the command line and output."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False)
    except OSError as err:
        raise BuildError(f"cannot run {cmd[0]!r} ({err}); install a C toolchain or set CC") \
            from err
    if proc.returncode != 0:
        raise BuildError(f"command failed with status {proc.returncode}:\n  "
                         f"{shlex.join(cmd)}\n{proc.stdout}")
    return proc.stdout


def compile_source(source: str, output: str, options=None, cc: Optional[str] = None) -> str:
    """Compiles one C file into a position-independent object; returns `output`."""
    cmd = _listify(cc or get_cc()) + ["-c", "-fPIC", "-std=c99", "-O2"] + _listify(options) + \
        [source, "-o", output]
    run_command(cmd)
    return output


def __getattr__(name):
    # KERNEL_LIBRARY_OPTIONS (linker options for a kernel library) is defined once, in
    # microruntime.linker; read on first use so importing the compiler does not load the runtime.
    if name == "KERNEL_LIBRARY_OPTIONS":
        from microruntime.linker import KERNEL_LIBRARY_OPTIONS

        return list(KERNEL_LIBRARY_OPTIONS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_shared(output: str, objects: Union[str, Sequence[str]], options=None,
                  cc: Optional[str] = None, cwd: Optional[str] = None) -> str:
    """Links objects (and sources) into a shared library; returns `output`."""
    objs = [objects] if isinstance(objects, str) else list(objects)
    cmd = _listify(cc or get_cc()) + ["-shared", "-fPIC", "-o", output] + objs + \
        _listify(options)
    run_command(cmd, cwd=cwd)
    return output


create_shared.output_format = "so"  # type: ignore[attr-defined]


def create_relocatable(output: str, objects: Union[str, Sequence[str]],
                       cc: Optional[str] = None) -> str:
    """Links relocatable objects into one relocatable object (`cc -r`); returns `output`."""
    objs = [objects] if isinstance(objects, str) else list(objects)
    run_command(_listify(cc or get_cc()) + ["-r", "-nostdlib", "-o", output] + objs)
    return output


def archiver_for(cc: str) -> str:
    """The `ar` that goes with a compiler: "aarch64-linux-gnu-gcc" → "aarch64-linux-gnu-ar" when
    that exists on PATH, else $AR or "ar"."""
    name = os.path.basename(_listify(cc)[0])
    for suffix in ("gcc", "clang", "cc"):
        if name.endswith(suffix) and name != suffix:
            candidate = name[: -len(suffix)] + "ar"
            if shutil.which(candidate):
                return candidate
    return os.environ.get("AR") or "ar"


def create_staticlib(output: str, objects: Union[str, Sequence[str]],
                     ar: Optional[str] = None) -> str:
    """Archives objects into a static library (replacing any old one); returns `output`."""
    objs = [objects] if isinstance(objects, str) else list(objects)
    if os.path.exists(output):
        os.remove(output)
    run_command(_listify(ar or os.environ.get("AR") or "ar") + ["rcs", output] + objs)
    return output


create_staticlib.output_format = "a"  # type: ignore[attr-defined]


def cross_compiler(compile_func: Union[str, Callable], options=None,
                   output_format: Optional[str] = None,
                   get_target_triple: Optional[Callable[[], str]] = None,
                   add_files: Optional[Sequence[str]] = None) -> Callable:
    """An fcompile for export_library that uses another compiler or extra options.

    `compile_func` is a callable like create_shared, a compiler command ("clang --target=..."),
    or a cross prefix ending in "-" ("aarch64-linux-gnu-" means "aarch64-linux-gnu-gcc").
    """
    base_options = _listify(options)
    extra_files = list(add_files or [])
    if isinstance(compile_func, str):
        cc = compile_func + "gcc" if compile_func.endswith("-") else compile_func

        def base(output, objects, options=None, cc_=cc):
            return create_shared(output, objects, options, cc=cc_)
    else:
        base = compile_func

    def fcompile(output, objects, options=None, **kwargs):
        objs = [objects] if isinstance(objects, str) else list(objects)
        return base(output, objs + extra_files, base_options + _listify(options), **kwargs)

    fcompile.output_format = output_format or getattr(base, "output_format", "so")
    if get_target_triple is not None:
        fcompile.get_target_triple = get_target_triple
    return fcompile
