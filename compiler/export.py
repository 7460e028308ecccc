"""The file-writing half of `export_library`: one library file from a module tree's host code and
the packed blob of its other modules (compiler/runtime_module.py gathers both).

By the file name's extension:
- `.so` / `.dylib` / `.dll`: linked with `fcompile` (default `contrib.cc.create_shared`);
- `.tar`: the object file(s) (`lib0.o`, `lib1.o`, ...; the blob as `devc.c`), which
  `microruntime.load_module` links when loading;
- `.o`: one relocatable object (the host objects and the blob merged with `cc -r`);
- `.a`: a static library (`contrib.cc.create_staticlib`), only for `--system-lib` targets: its
  object registers its functions at start-up and exposes `kiln_system_lib_<prefix>register`;
- `.c` / `.ll` / `.s`: the root module's generated source text.
`.a` for target "c" with `cc="aarch64-linux-gnu-gcc"` compiles the C source with that compiler
and archives it with its `ar`. A custom `fcompile` (e.g.
`contrib.cc.cross_compiler("aarch64-linux-gnu-")`) receives the C source for target "c" (so a
cross compiler compiles it, as TVM does with C source modules) and the object otherwise; extra
keyword arguments (`options=[...]`, `cc=...`) are passed on.

Imported modules that are not host code travel in `__tvm_ffi__library_bin` (TVM-FFI 0.27 layout,
see `pack_library_bin`), written as a file that an assembler source includes
(`library_bin_asm_source`; as C source, `library_bin_c_source`, in a `.tar` and off ELF) and
compiled with the host code; for a system library the blob registers itself at start-up as
`<prefix>__tvm_ffi__library_bin` through `TVMFFIEnvModRegisterSystemLibSymbol`, as TVM does.
"""
from __future__ import annotations

import os
import secrets
import shutil
import struct
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from .codegen import HostArtifact
from .codegen.c_family.c import bare_metal_flags, compile_flags
from .contrib import cc as _cc
from .ir.errors import TargetError
from .target import Target, check_system_lib_prefix

LIBRARY_BIN = "__tvm_ffi__library_bin"


@dataclass
class HostCode:
    """One host module's code: its artifact (object file + sources) and target."""
    artifact: HostArtifact
    target: Target
    cross: bool = False  # code for another architecture (llvm -mtriple=...)


@dataclass
class LibraryParts:
    """Everything one exported library holds. `hosts[0]` is the root module."""
    hosts: List[HostCode]
    system_lib_prefix: Optional[str] = None   # None: not a system library
    static_objects: List[str] = field(default_factory=list)  # static-library imports' objects
    library_bin: Optional[bytes] = None       # the packed blob, when there are such imports


# ---- __tvm_ffi__library_bin ------------------------------------------------------------------
def _u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def _string(data: bytes) -> bytes:
    return _u64(len(data)) + data


def pack_library_bin(modules: Sequence[Tuple[str, Optional[bytes]]], indptr: Sequence[int],
                     children: Sequence[int]) -> bytes:
    """The blob: u64 nbytes, vec<u64> import_tree_indptr, vec<u64> import_tree_children, then per
    module `string kind` and (unless kind is "_lib", the library itself) `string payload`.
    `modules[i]` is (kind, payload); module 0 is the root of the import tree (CSR)."""
    body = _u64(len(indptr)) + b"".join(_u64(i) for i in indptr)
    body += _u64(len(children)) + b"".join(_u64(c) for c in children)
    for kind, payload in modules:
        body += _string(kind.encode())
        if kind != "_lib":
            body += _string(bytes(payload))
    return _u64(len(body)) + body


_HEX = [f"0x{b:02x}" for b in range(256)]


def library_bin_c_source(blob: bytes, system_lib_prefix: Optional[str] = None) -> str:
    """C99 source defining the blob: the exported const array `__tvm_ffi__library_bin`, or for a
    system library a static array registered at start-up as `<prefix>__tvm_ffi__library_bin`."""
    if system_lib_prefix is not None:  # written into a C string literal and a comment
        check_system_lib_prefix(system_lib_prefix)
    rows = [", ".join(map(_HEX.__getitem__, blob[i:i + 16])) for i in range(0, len(blob), 16)]
    data = ",\n  ".join(rows)
    if system_lib_prefix is None:
        return (f"/* imported modules of this library (TVM-FFI library blob) */\n"
                f"const unsigned char {LIBRARY_BIN}[{len(blob)}] = {{\n  {data}\n}};\n")
    name = f"{system_lib_prefix}{LIBRARY_BIN}"
    return (f"/* imported modules of the system library '{system_lib_prefix}' */\n"
            f"int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);\n"
            f"static const unsigned char kiln_library_bin[{len(blob)}] = {{\n  {data}\n}};\n"
            f"static const unsigned long long kiln_library_bin_nbytes = "
            f"sizeof(kiln_library_bin);\n"
            f"static void __attribute__((constructor)) kiln_register_library_bin(void) {{\n"
            f"  TVMFFIEnvModRegisterSystemLibSymbol(\"{name}\", (void*)kiln_library_bin);\n"
            f"  TVMFFIEnvModRegisterSystemLibSymbol(\"{name}_nbytes\", "
            f"(void*)&kiln_library_bin_nbytes);\n"
            f"}}\n")


def _blob_symbol(system_lib_prefix: str) -> str:
    """The hidden symbol of a system library's blob data (one per prefix)."""
    return "kiln_library_bin_" + check_system_lib_prefix(system_lib_prefix)


def library_bin_asm_source(bin_path: str, system_lib_prefix: Optional[str] = None) -> str:
    """GNU assembler source (ELF) defining the blob from the file `bin_path` (`.incbin`): the
    global `__tvm_ffi__library_bin`, or for a system library the hidden `_blob_symbol` that
    `library_bin_register_c_source` registers. Assembling it takes no time, where a C array
    of a large model's weights takes minutes to compile."""
    symbol = LIBRARY_BIN if system_lib_prefix is None else _blob_symbol(system_lib_prefix)
    hidden = "" if system_lib_prefix is None else f"  .hidden {symbol}\n"
    # A system library's registration carries the blob's real size (`<symbol>_nbytes`, a u64):
    # nothing else tells the runtime where the blob ends.
    nbytes = "" if system_lib_prefix is None else (
        f"  .globl {symbol}_nbytes\n"
        f"  .hidden {symbol}_nbytes\n"
        f"  .type {symbol}_nbytes, %object\n"
        f"  .balign 8\n"
        f"{symbol}_nbytes:\n"
        f"  .quad .L{symbol}_end - {symbol}\n"
        f"  .size {symbol}_nbytes, 8\n")
    path = bin_path.replace("\\", "\\\\").replace('"', '\\"')
    return (f"  .section .rodata.{symbol},\"a\"\n"
            f"  .globl {symbol}\n"
            f"{hidden}"
            f"  .type {symbol}, %object\n"
            f"  .balign 8\n"
            f"{symbol}:\n"
            f"  .incbin \"{path}\"\n"
            f".L{symbol}_end:\n"
            f"  .size {symbol}, . - {symbol}\n"
            f"{nbytes}"
            f"  .section .note.GNU-stack,\"\",%progbits\n")


def library_bin_register_c_source(system_lib_prefix: str) -> str:
    """C99 source registering a system library's blob (defined by `library_bin_asm_source`) at
    start-up as `<prefix>__tvm_ffi__library_bin`."""
    symbol = _blob_symbol(system_lib_prefix)  # checks the prefix
    return (f"/* imported modules of the system library '{system_lib_prefix}' */\n"
            f"int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);\n"
            f"extern const unsigned char {symbol}[];\n"
            f"extern const unsigned long long {symbol}_nbytes;\n"
            f"static void __attribute__((constructor)) kiln_register_library_bin(void) {{\n"
            f"  TVMFFIEnvModRegisterSystemLibSymbol(\"{system_lib_prefix}{LIBRARY_BIN}\", "
            f"(void*){symbol});\n"
            f"  TVMFFIEnvModRegisterSystemLibSymbol(\"{system_lib_prefix}{LIBRARY_BIN}_nbytes\", "
            f"(void*)&{symbol}_nbytes);\n"
            f"}}\n")


# ---- writing a library -----------------------------------------------------------------------
def _with_options(kwargs, extra):
    kwargs = dict(kwargs)
    options = kwargs.pop("options", None) or []
    if isinstance(options, str):
        options = options.split()
    kwargs["options"] = list(extra) + list(options)
    return kwargs


def _cc_options(options):
    if options is None:
        return []
    return options.split() if isinstance(options, str) else list(options)


def _write(path: str, text) -> str:
    """Writes a source: text, or bytes (LLVM bitcode)."""
    with open(path, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    return path


def _blob_source(parts: LibraryParts, workdir: str, c_only: bool = False) -> List[str]:
    """The source files defining the blob: assembler (`.incbin` of the blob's file, ELF
    platforms) plus, for a system library, its registration in C; else (or `c_only`) one C
    file."""
    if parts.library_bin is None:
        return []
    prefix = parts.system_lib_prefix
    if c_only or sys.platform in ("darwin", "win32", "cygwin"):
        return [_write(os.path.join(workdir, "devc.c"),
                       library_bin_c_source(parts.library_bin, prefix))]
    bin_path = os.path.join(workdir, "devc.bin")
    with open(bin_path, "wb") as f:
        f.write(parts.library_bin)
    sources = [_write(os.path.join(workdir, "devc_bin.s"),
                      library_bin_asm_source(bin_path, prefix))]
    if prefix is not None:
        sources.append(_write(os.path.join(workdir, "devc.c"),
                              library_bin_register_c_source(prefix)))
    return sources


def _check_blob_compiler(parts: LibraryParts, cc, what: str):
    if parts.library_bin is not None and cc is None and any(h.cross for h in parts.hosts):
        raise TargetError(f"exporting {what} of a cross-compiled module with imported modules "
                          "needs the target's C compiler for the library blob: pass "
                          "cc='<triple>-gcc'")


def export_library(parts: LibraryParts, file_name: str, fcompile=None, workspace_dir=None,
                   **kwargs):
    """Writes `parts` as `file_name` (the format follows the extension; see the module doc).

    A library is written under a temporary name in the same folder and renamed into place, so
    re-exporting never rewrites the file (inode) that a running process has loaded: it keeps
    the old library, and the next `load_module` gets the new one. The intermediate files go to
    `workspace_dir` when given, else to a temporary folder that is removed afterwards."""
    file_name = os.path.abspath(os.fspath(file_name))
    ext = file_name.rsplit(".", 1)[-1] if "." in os.path.basename(file_name) else ""
    if ext in ("c", "ll", "s", "asm"):
        return save_source(parts.hosts[0].artifact, file_name, {"s": "asm"}.get(ext, ext))
    if ext not in ("so", "dylib", "dll", "tar", "o", "a"):
        raise TargetError(f"cannot export {os.path.basename(file_name)!r}: use .so, .tar, .o, "
                          ".a (system library), or .c/.ll/.s (source)")
    folder, base = os.path.split(file_name)
    staged = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp.{ext}")
    workdir = workspace_dir or tempfile.mkdtemp(prefix="kiln_export_")
    try:
        result = _export(parts, staged, ext, fcompile, workdir, kwargs)
        if os.path.exists(staged):
            os.replace(staged, file_name)
    finally:
        if os.path.lexists(staged):
            os.unlink(staged)
        if workspace_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return file_name if result is None or result == staged else result


def _export(parts: LibraryParts, file_name: str, ext: str, fcompile, workdir: str, kwargs):
    """Writes the library `file_name` (of kind `ext`) using `workdir` for intermediate files;
    returns what a custom `fcompile` returned, else None."""
    root = parts.hosts[0]
    objects = [h.artifact.object_file for h in parts.hosts] + list(parts.static_objects)
    if ext == "o":
        cross_cc = kwargs.get("cc")
        _check_blob_compiler(parts, cross_cc, "an object file (.o)")
        if len(objects) == 1 and parts.library_bin is None:
            shutil.copyfile(objects[0], file_name)
        else:
            blob = _blob_objects(parts, workdir, cross_cc, kwargs)
            _cc.create_relocatable(file_name, objects + blob, cross_cc)
        return None
    if ext == "tar":
        with tarfile.open(file_name, "w") as tar:
            for i, obj in enumerate(objects):
                tar.add(obj, arcname=f"lib{i}.o")
            for source in _blob_source(parts, workdir, c_only=True):
                tar.add(source, arcname="devc.c")
        return None
    if ext == "a":
        _export_static(parts, file_name, objects, fcompile, workdir, kwargs)
        return None
    blob = _blob_source(parts, workdir)
    if fcompile is None:
        _cc.create_shared(file_name, objects + blob,
                          **_with_options(kwargs, _cc.KERNEL_LIBRARY_OPTIONS))
        return None
    if all(h.target.kind.name == "c" and "c" in h.artifact.sources for h in parts.hosts):
        sources = [_write(os.path.join(workdir, f"lib{i}.c"), h.artifact.sources["c"])
                   for i, h in enumerate(parts.hosts)]
        return fcompile(file_name, sources + list(parts.static_objects) + blob,
                        **_with_options(kwargs, ["-std=c99", "-fPIC"]
                                        + compile_flags(root.target, host=False)))
    return fcompile(file_name, objects + blob, **kwargs)


def save_source(artifact: HostArtifact, file_name: str, fmt: str) -> str:
    """Writes the generated source `fmt` ("c", "ll", "asm", "bc") of one host module."""
    if fmt not in artifact.sources:
        raise TargetError(f"this module has no {fmt!r} source; it has "
                          f"{', '.join(sorted(artifact.sources)) or 'none'}")
    return _write(file_name, artifact.sources[fmt])


def _export_static(parts: LibraryParts, file_name, objects, fcompile, workdir, kwargs):
    root = parts.hosts[0]
    if parts.system_lib_prefix is None:
        raise TargetError("exporting a static library (.a) needs a system library: build "
                          f"with target '{root.target.kind.name} --system-lib' (its functions then "
                          "register themselves at start-up)")
    cross_cc = kwargs.get("cc")
    ar = None
    if cross_cc and fcompile is None and all(h.target.kind.name == "c" for h in parts.hosts):
        # The host objects are for this machine: compile the C sources with the given
        # compiler and archive them with the matching archiver.
        objects = [_compile_c(h, i, cross_cc, workdir, kwargs.get("options"))
                   for i, h in enumerate(parts.hosts)] + list(parts.static_objects)
        ar = kwargs.get("ar") or _cc.archiver_for(cross_cc)
    _check_blob_compiler(parts, cross_cc, "a static library (.a)")
    if parts.library_bin is not None or len(objects) > 1:
        # One object, so that the app's reference to kiln_system_lib_<prefix>register pulls in
        # every module and the blob's registration with it.
        merged = os.path.join(workdir, "lib.o")
        blob = _blob_objects(parts, workdir, cross_cc, kwargs)
        _cc.create_relocatable(merged, objects + blob, cross_cc)
        objects = [merged]
    if ar is not None:
        _cc.create_staticlib(file_name, objects, ar=ar)
    else:
        (fcompile or _cc.create_staticlib)(file_name, objects)
    return file_name


def _blob_objects(parts: LibraryParts, workdir, cc, kwargs) -> List[str]:
    # Compiled for the same CPU and ABI as the host code when that is bare metal.
    options = bare_metal_flags(parts.hosts[0].target) + _cc_options(kwargs.get("options"))
    return [_cc.compile_source(src, os.path.splitext(src)[0] + ".o", options, cc=cc)
            for src in _blob_source(parts, workdir)]


def _compile_c(host: HostCode, index: int, cc, workdir, options) -> str:
    """A module's C source compiled with `cc` (e.g. a cross compiler) into an object."""
    source = _write(os.path.join(workdir, f"lib{index}.c"), host.artifact.sources["c"])
    return _cc.compile_source(source, os.path.join(workdir, f"lib{index}.o"),
                              compile_flags(host.target, cc) + _cc_options(options), cc=cc)
