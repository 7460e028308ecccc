"""What the SPIR-V tests share: `spirv_val(binary)` (spirv-val for Vulkan 1.1; the test skips
when spirv-tools is not installed), the kernels of GPUs part 1 (the te definitions of
tests/compiler/codegen/gpu/) and `vulkan_module(s, args, name)`."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import compiler
from compiler import te, tir

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "gpu"))

from test_gpu_conv2d import conv2d  # noqa: E402
from test_gpu_matmul_shared import matmul  # noqa: E402
from test_gpu_reduction import row_reduce  # noqa: E402
from test_gpu_softmax import softmax  # noqa: E402
from test_gpu_vector_add import vector_add  # noqa: E402

__all__ = ["conv2d", "matmul", "row_reduce", "softmax", "vector_add", "spirv_val",
           "vulkan_module", "validate_module"]


def spirv_val(binary: bytes) -> None:
    """Asserts that spirv-val accepts `binary` for Vulkan 1.1 (skips without spirv-val)."""
    tool = shutil.which("spirv-val")
    if tool is None:
        pytest.skip("spirv-val (spirv-tools) is not installed")
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(binary)
        f.flush()
        done = subprocess.run([tool, "--target-env", "vulkan1.1", f.name], capture_output=True,
                              text=True)
    assert done.returncode == 0, f"spirv-val rejects the module:\n{done.stderr}{done.stdout}"


def validate_module(dev) -> None:
    """spirv-val on every shader of a "vulkan" device module."""
    assert dev.kind == "vulkan" and dev.shaders
    for binary in dev.shaders.values():
        spirv_val(binary)


def vulkan_module(s, args, name, target_host="llvm"):
    """(host module, its vulkan device module) of a build for target "vulkan"."""
    m = compiler.build(s, args, target="vulkan", target_host=target_host, name=name)
    return m, m.imported_modules[0]


def bool_select():
    """A bool mask read and written: O[i] = !M[i], V[i] = M[i] ? A[i] : 0 (bool tensors are
    bytes in memory)."""
    n = 100
    M = te.placeholder((n,), name="M", dtype="bool")
    A = te.placeholder((n,), name="A")
    O = te.compute((n,), lambda i: tir.Not(M[i]), name="O")
    V = te.compute((n,), lambda i: te.if_then_else(M[i], A[i], 0.0), name="V")
    s = te.create_schedule([O.op, V.op])
    for t in (O, V):
        s[t].bind(t.op.axis[0], te.thread_axis("threadIdx.x"))
    return s, [M, A, O, V]
