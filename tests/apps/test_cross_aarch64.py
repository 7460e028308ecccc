"""Cross compilation end to end: the system_lib_deploy app built for AArch64 on this host and
run under qemu-user.

The dlopen-free microruntime is cross-compiled with aarch64-linux-gnu-gcc; the kernels are built
by Kiln for `llvm -mtriple=aarch64-linux-gnu --system-lib` (exported as `.a`) and for
`c --system-lib` (the generated C source, cross-compiled and archived with contrib.cc); the app
is linked statically and run with qemu-aarch64, and must print what the native app prints.
Skipped when the cross toolchain or qemu-aarch64 is missing (.ci/run installs them:
gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user).
"""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "system_lib_deploy")
INCLUDE = os.path.join(ROOT, "microruntime", "include")
CROSS_CC = "aarch64-linux-gnu-gcc"
CROSS_AR = "aarch64-linux-gnu-ar"
QEMU = "qemu-aarch64"
TRIPLE = "aarch64-linux-gnu"

_missing = [tool for tool in (CROSS_CC, QEMU) if shutil.which(tool) is None]
needs_cross_tools = pytest.mark.skipif(
    bool(_missing), reason=f"cross toolchain not installed: {', '.join(_missing)} not on PATH "
    "(apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)")

# The Makefile's flags for build/libmicroruntime_nodl.a.
RUNTIME_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                 "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-O2",
                 "-fvisibility=hidden", "-DMR_NO_DLOPEN", "-I" + INCLUDE]


def _ar():
    return CROSS_AR if shutil.which(CROSS_AR) else "ar"


def _machine(path):
    """readelf's Machine line for an ELF object (or each member of an archive)."""
    out = subprocess.run(["readelf", "-h", path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return {line.split(":", 1)[1].strip() for line in out.splitlines()
            if line.strip().startswith("Machine:")}


@pytest.fixture(scope="module")
def cross_runtime(tmp_path_factory):
    """libmicroruntime_nodl.a for AArch64: every runtime source but the dlopen loader."""
    out = tmp_path_factory.mktemp("mr_aarch64")
    sources = [s for s in sorted(glob.glob(os.path.join(ROOT, "microruntime", "src", "*.c")))
               if os.path.basename(s) != "module_dso.c"]
    objects, procs = [], []
    for src in sources:
        obj = str(out / (os.path.basename(src)[:-2] + ".o"))
        objects.append(obj)
        procs.append(subprocess.Popen([CROSS_CC] + RUNTIME_FLAGS + ["-c", src, "-o", obj],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    for src, proc in zip(sources, procs):
        log = proc.communicate()[0]
        assert proc.returncode == 0, f"{CROSS_CC} failed on {src}:\n{log}"
    archive = str(out / "libmicroruntime_nodl.a")
    subprocess.run([_ar(), "rcs", archive] + objects, check=True)
    assert _machine(archive) == {"AArch64"}
    return archive


def _app_module():
    """apps/system_lib_deploy/build_kernels.py, loaded by path (other folders have modules of
    the same name on sys.path)."""
    spec = importlib.util.spec_from_file_location("system_lib_build_kernels",
                                                  os.path.join(APP, "build_kernels.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_kernels(target, out_dir):
    """The app's kernels as an AArch64 static library, built with Kiln for `target`."""
    sys.path.insert(0, ROOT)
    build_kernels = _app_module()
    archive = str(out_dir / "kernels.a")
    if target == "llvm":
        # LLVM emits the AArch64 object itself; export_library(".a") archives it.
        build_kernels.main(archive, f"llvm -mtriple={TRIPLE}")
    else:
        # Target c: export_library compiles the C source with the cross compiler and archives
        # it with the matching ar.
        build_kernels.build(target).export_library(archive, cc=CROSS_CC)
    return archive


def _targets():
    sys.path.insert(0, ROOT)
    from compiler.codegen import host_codegen_available

    return (["llvm"] if host_codegen_available("llvm") else []) + ["c"]


@needs_cross_tools
@pytest.mark.parametrize("target", _targets())
def test_cross_aarch64_app(tmp_path, cross_runtime, target):
    kernels = _build_kernels(target, tmp_path)
    assert _machine(kernels) == {"AArch64"}
    if shutil.which("file"):
        subprocess.run([_ar(), "x", kernels], cwd=tmp_path, check=True)
        member = subprocess.run([_ar(), "t", kernels], stdout=subprocess.PIPE, text=True,
                                check=True).stdout.split()[0]
        described = subprocess.run(["file", str(tmp_path / member)], stdout=subprocess.PIPE,
                                   text=True, check=True).stdout
        assert "ARM aarch64" in described, described

    app = str(tmp_path / "app")
    subprocess.run([CROSS_CC, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-static",
                    "-I" + INCLUDE, os.path.join(APP, "main.c"), kernels, cross_runtime,
                    "-lpthread", "-lm", "-o", app], check=True)
    assert _machine(app) == {"AArch64"}
    out = subprocess.run([QEMU, app], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=dict(os.environ, MR_NUM_THREADS="2"), timeout=60,
                         check=False)
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert lines[0] == "vadd: 0 3 6 9 12 15 18 21 24 27"
    assert lines[1].startswith("mm: 64x64 checksum 54978.5") and lines[1].endswith(" OK")
    assert "ValueError: Mismatched C.ndim on argument #2" in out.stdout


def test_cross_module_only_exports():
    """A module built for another architecture is not loaded: it exports, it does not run."""
    sys.path.insert(0, ROOT)
    from compiler.codegen import host_codegen_available

    if not host_codegen_available("llvm"):
        pytest.skip("llvm codegen (llvmlite) not available")
    lib = _app_module().build(f"llvm -mtriple={TRIPLE}")
    assert lib.type_key == "llvm" and lib.is_dso_exportable
    assert "aarch64" in lib.get_source("ll")
    with pytest.raises(AttributeError, match="cannot run functions"):
        lib["vadd"]
