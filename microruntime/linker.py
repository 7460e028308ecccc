"""The system C compiler as a linker: `.o`/`.tar` -> `.so` for load_module, static exports."""
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
# Linker options for a kernel library: its code binds to its own context slots and library
# context (`__TVMBackend*`, `__tvm_ffi__library_ctx`) even when another library loaded with
# RTLD_GLOBAL defines the same names (a system library, say), instead of sharing that one's.
# The DWARF the kernels' objects carry (a subprogram per function, no lines; a `.o` export
# keeps it) is left out of the library: 12-20 KB of a model's file, read by nothing.
# The one definition; the compiler's contrib.cc uses it too.
KERNEL_LIBRARY_OPTIONS = ["-Wl,-Bsymbolic", "-Wl,--strip-debug"] \
    if sys.platform.startswith("linux") else []


def _cc():
    return os.environ.get("CC", "cc")


def _run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")


def _extract(tar_path, into):
    with tarfile.open(tar_path) as tar:
        members = []
        for m in tar.getmembers():
            name = os.path.normpath(m.name)
            if not m.isfile() or name.startswith("..") or os.path.isabs(name):
                continue
            members.append(m)
        tar.extractall(into, members=members)
    inputs = []
    for root, _, files in os.walk(into):
        inputs += [os.path.join(root, f) for f in files if f.endswith((".o", ".c"))]
    if not inputs:
        raise ValueError(f"{tar_path!r} holds no object (.o) or C (.c) files to link")
    return sorted(inputs)


def link_shared(path):
    """Links an object file or a tar of them into a shared library in a temporary folder.

    Returns (the TemporaryDirectory, which removes the folder when collected; the .so path).
    """
    tmp = tempfile.TemporaryDirectory(prefix="microruntime_")
    inputs = _extract(path, tmp.name) if path.endswith(".tar") else [path]
    so_path = os.path.join(tmp.name, os.path.basename(path).rsplit(".", 1)[0] + ".so")
    _run([_cc(), "-shared", "-fPIC", "-O2", "-I" + _INCLUDE, "-o", so_path] + inputs
         + KERNEL_LIBRARY_OPTIONS)
    return tmp, so_path


def export_static(obj_path, file_name):
    """Writes an object file as `.o` (copy), `.a` (archive), `.tar` or `.so` (linked)."""
    if file_name.endswith(".o"):
        shutil.copyfile(obj_path, file_name)
    elif file_name.endswith(".a"):
        _run(["ar", "rcs", file_name, obj_path])
    elif file_name.endswith(".tar"):
        with tarfile.open(file_name, "w") as tar:
            tar.add(obj_path, arcname=os.path.basename(obj_path))
    elif file_name.endswith((".so", ".dylib", ".dll")):
        _run([_cc(), "-shared", "-fPIC", "-o", file_name, obj_path] + KERNEL_LIBRARY_OPTIONS)
    else:
        raise ValueError(f"cannot export a static library as {file_name!r} "
                         "(expected .o, .a, .tar or .so)")
