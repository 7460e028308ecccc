"""FP contraction: with default flags both host targets fuse `a*b + c` into an fma on an x86 host
with FMA (vfmadd in the assembly get_source("asm") returns); `-fp-contract=off` keeps products
and sums apart. Results match numpy either way."""
import platform

import numpy as np
import pytest

import compiler
import microruntime
from compiler import te
from compiler.codegen.c_family.c import compile_flags
from compiler.ir.errors import TargetError
from compiler.target import Target


def _host_has_fma() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read().replace("\n", " ")
    except OSError:
        return False


needs_x86_fma = pytest.mark.skipif(not _host_has_fma(),
                                   reason="vfmadd is the x86 FMA instruction; this host has none")


def multiply_add(n=256):
    A, B, C = (te.placeholder((n,), name=x) for x in "ABC")
    D = te.compute((n,), lambda i: A[i] * B[i] + C[i], name="D")
    return te.create_schedule(D.op), [A, B, C, D]


def run(mod, n=256):
    rng = np.random.default_rng(0)
    a, b, c = (rng.random(n, dtype="float32") for _ in range(3))
    arrs = [microruntime.nd.array(x) for x in (a, b, c, np.zeros(n, "float32"))]
    mod["madd"](*arrs)
    np.testing.assert_allclose(arrs[3].numpy(), a * b + c, rtol=1e-6)


@needs_x86_fma
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_default_flags_fuse_multiply_add(target):
    s, args = multiply_add()
    mod = compiler.build(s, args, target=target, name="madd")
    assert "vfmadd" in mod.get_source("asm")
    run(mod)


@needs_x86_fma
@pytest.mark.parametrize("target", ["c -fp-contract=off", "llvm -fp-contract=off"])
def test_fp_contract_off_keeps_multiply_and_add(target):
    s, args = multiply_add()
    mod = compiler.build(s, args, target=target, name="madd")
    assert "vfmadd" not in mod.get_source("asm")
    run(mod)


@pytest.mark.parametrize("kind", ["c", "llvm"])
def test_unknown_fp_contract_mode_is_a_target_error(kind):
    s, args = multiply_add()
    with pytest.raises(TargetError, match="fp-contract=on"):
        compiler.build(s, args, target=f"{kind} -fp-contract=on", name="madd")


def test_c_cpu_flags():
    host = compile_flags(Target("c"))
    assert ("-march=native" in host or "-mcpu=native" in host) and "-ffp-contract=fast" in host
    generic = compile_flags(Target("c -mcpu=generic"))
    assert not any(f.startswith(("-march", "-mcpu")) for f in generic)
    x86 = Target("c -mtriple=x86_64-linux-gnu -mcpu=x86-64 -mattr=+avx2,+fma")
    assert compile_flags(x86)[-4:-1] == ["-march=x86-64", "-mavx2", "-mfma"]
    cross = compile_flags(Target("c -mtriple=riscv32-unknown-elf"))
    assert not any(f.startswith(("-march", "-mcpu")) for f in cross)
    assert "-march=native" not in compile_flags(Target("c"), cc="riscv64-linux-gnu-gcc")
    assert "-ffp-contract=off" in compile_flags(Target("c -fp-contract=off"))
