"""nvcc driver, as TVM's tvm.contrib.nvcc: CUDA C source -> PTX, cubin or fatbin.

    compile_cuda(code, target_format="ptx", arch=None, options=None, path_target=None) -> str|bytes

`arch` is a compute capability ("sm_80", "compute_80", or a list of them); by default the
oldest architecture this nvcc supports well (DEFAULT_ARCH), since no GPU is queried here. PTX
comes back as text, cubin and fatbin as bytes. nvcc is looked up on PATH, then in
/usr/local/cuda/bin and /usr/local/bin ($KILN_NVCC names it explicitly); a missing nvcc or a
failed compile raises BuildError with nvcc's message.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import List, Optional, Sequence, Union

from ..ir.errors import BuildError

DEFAULT_ARCH = "sm_75"
_FORMATS = ("ptx", "cubin", "fatbin")


def find_nvcc() -> Optional[str]:
    """The path of nvcc, or None."""
    explicit = os.environ.get("KILN_NVCC")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    found = shutil.which("nvcc")
    if found:
        return found
    for cand in ("/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc"):
        if os.path.exists(cand):
            return cand
    return None


def _arch_flags(arch, target_format: str) -> List[str]:
    archs = [arch] if isinstance(arch, str) else list(arch or [DEFAULT_ARCH])
    if target_format == "fatbin":
        flags = []
        for a in archs:
            num = a.split("_", 1)[-1]
            flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        return flags
    if len(archs) != 1:
        raise BuildError(f"compiling to {target_format} takes one arch, got {archs}")
    a = archs[0]
    if target_format == "ptx" and a.startswith("sm_"):
        a = "compute_" + a[3:]
    return [f"-arch={a}"]


def tool_env() -> dict:
    """The environment for nvcc: this process's, without LD_PRELOAD (a sanitizer runtime
    preloaded into the process that calls the compiler makes nvcc's own tools crash)."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def compile_cuda(code: str, target_format: str = "ptx", arch: Union[str, Sequence[str],
                 None] = None, options: Optional[Sequence[str]] = None,
                 path_target: Optional[str] = None):
    """Compiles CUDA C `code` with nvcc into `target_format` (see the module doc)."""
    if target_format not in _FORMATS:
        raise BuildError(f"nvcc target_format must be one of {', '.join(_FORMATS)}, got "
                         f"{target_format!r}")
    nvcc = find_nvcc()
    if nvcc is None:
        raise BuildError("nvcc (the CUDA compiler) was not found on PATH, in "
                         "/usr/local/cuda/bin or /usr/local/bin: install the CUDA toolkit or "
                         "set KILN_NVCC to its path")
    workdir = tempfile.mkdtemp(prefix="kiln_nvcc_")
    try:
        src = os.path.join(workdir, "kernel.cu")
        out = path_target or os.path.join(workdir, f"kernel.{target_format}")
        with open(src, "w") as f:
            f.write(code)
        cmd = [nvcc, f"--{target_format}", "-O3", *_arch_flags(arch, target_format),
               *(options or []), "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=tool_env())
        if proc.returncode != 0:
            raise BuildError(f"nvcc failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}\n"
                             f"source:\n{_numbered(code)}")
        mode = "r" if target_format == "ptx" else "rb"
        with open(out, mode) as f:
            return f.read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _numbered(code: str) -> str:
    return "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(code.splitlines()))
