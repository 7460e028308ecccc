"""`Module.export_library` for modules the compiler built (attached as `module._exporter`).

By the file name's extension:
- `.so` / `.dylib` / `.dll`: linked with `fcompile` (default `contrib.cc.create_shared`);
- `.tar`: the object file(s), which `microruntime.load_module` links when loading;
- `.o`: the single relocatable object;
- `.a`: a static library (`contrib.cc.create_staticlib`), only for `--system-lib` targets: its
  object registers its functions at start-up and exposes `kiln_system_lib_<prefix>register`;
- `.c` / `.ll`: the generated source text.
`.a` for target "c" with `cc="aarch64-linux-gnu-gcc"` compiles the C source with that compiler
and archives it with its `ar`. A custom `fcompile` (e.g.
`contrib.cc.cross_compiler("aarch64-linux-gnu-")`) receives the C source for target "c" (so a
cross compiler compiles it, as TVM does with C source modules) and the object otherwise; extra
keyword arguments (`options=[...]`, `cc=...`) are passed on.
"""
from __future__ import annotations

import os
import shutil
import tarfile
import tempfile

from .codegen.c_family.c import compile_flags
from .contrib import cc as _cc
from .ir.errors import TargetError


def make_exporter(artifact, target, mod):
    """The `_exporter(module, file_name, **kwargs)` for one built artifact."""
    system_lib = mod.attrs.get("system_lib_prefix") is not None

    def exporter(module, file_name, fcompile=None, addons=None, workspace_dir=None, **kwargs):
        del module, addons
        return export_library(artifact, target, system_lib, file_name, fcompile,
                              workspace_dir, **kwargs)

    return exporter


def _with_options(kwargs, extra):
    kwargs = dict(kwargs)
    options = kwargs.pop("options", None) or []
    if isinstance(options, str):
        options = options.split()
    kwargs["options"] = list(extra) + list(options)
    return kwargs


def export_library(artifact, target, system_lib: bool, file_name: str, fcompile=None,
                   workspace_dir=None, **kwargs):
    file_name = os.path.abspath(os.fspath(file_name))
    obj = artifact.object_file
    ext = file_name.rsplit(".", 1)[-1] if "." in os.path.basename(file_name) else ""
    if ext in ("c", "ll", "s", "asm"):
        fmt = {"s": "asm"}.get(ext, ext)
        if fmt not in artifact.sources:
            raise TargetError(f"this module has no {fmt!r} source; it has "
                              f"{', '.join(sorted(artifact.sources)) or 'none'}")
        with open(file_name, "w") as f:
            f.write(artifact.sources[fmt])
        return file_name
    if ext == "o":
        shutil.copyfile(obj, file_name)
        return file_name
    if ext == "tar":
        with tarfile.open(file_name, "w") as tar:
            tar.add(obj, arcname="lib0.o")
        return file_name
    if ext == "a":
        if not system_lib:
            raise TargetError("exporting a static library (.a) needs a system library: build "
                              f"with target '{target.kind} --system-lib' (its functions then "
                              "register themselves at start-up)")
        cross_cc = kwargs.get("cc")
        if target.kind == "c" and cross_cc and fcompile is None:
            # The host object is for this machine: compile the C source with the given
            # compiler and archive it with the matching archiver.
            obj = _compile_c(artifact, target, cross_cc, workspace_dir, kwargs.get("options"))
            ar = kwargs.get("ar") or _cc.archiver_for(cross_cc)
            _cc.create_staticlib(file_name, [obj], ar=ar)
            return file_name
        (fcompile or _cc.create_staticlib)(file_name, [obj])
        return file_name
    if ext not in ("so", "dylib", "dll"):
        raise TargetError(f"cannot export {os.path.basename(file_name)!r}: use .so, .tar, .o, "
                          ".a (system library), or .c/.ll (source)")
    if fcompile is None:
        _cc.create_shared(file_name, [obj], **_with_options(kwargs, _cc.KERNEL_LIBRARY_OPTIONS))
        return file_name
    if target.kind == "c" and "c" in artifact.sources:
        workdir = workspace_dir or tempfile.mkdtemp(prefix="kiln_export_")
        source = os.path.join(workdir, "lib0.c")
        with open(source, "w") as f:
            f.write(artifact.sources["c"])

        result = fcompile(file_name, [source],
                          **_with_options(kwargs, ["-std=c99", "-fPIC"]
                                          + compile_flags(target, host=False)))
    else:
        result = fcompile(file_name, [obj], **kwargs)
    return result if result is not None else file_name


def _compile_c(artifact, target, cc, workspace_dir, options) -> str:
    """The module's C source compiled with `cc` (e.g. a cross compiler) into an object."""

    workdir = workspace_dir or tempfile.mkdtemp(prefix="kiln_export_")
    source = os.path.join(workdir, "lib0.c")
    with open(source, "w") as f:
        f.write(artifact.sources["c"])
    return _cc.compile_source(source, os.path.join(workdir, "lib0.o"),
                              compile_flags(target, cc) + _cc_options(options), cc=cc)


def _cc_options(options):
    if options is None:
        return []
    return options.split() if isinstance(options, str) else list(options)
