"""vector_isa: the vector unit a CPU target compiles for, from -mattr, -mcpu and -mtriple."""
import pytest

from compiler.target import Target
from compiler.target.isa import AVX2, AVX512, NEON, SSE, vector_isa


@pytest.mark.parametrize("text, isa", [
    ("llvm -mcpu=skylake-avx512", AVX512),
    ("llvm -mcpu=znver4", AVX512),
    ("llvm -mcpu=haswell", AVX2),
    ("c -mcpu=znver3", AVX2),
    ("llvm -mcpu=generic", SSE),
    ("llvm -mcpu=generic -mattr=+avx512f", AVX512),
    ("llvm -mcpu=generic -mattr=+avx2,+fma", AVX2),
    ("llvm -mtriple=aarch64-linux-gnu", NEON),
])
def test_isa_from_target(text, isa):
    assert vector_isa(text) == isa


def test_lanes_follow_dtype():
    assert AVX2.lanes("float32") == 8
    assert AVX2.lanes("float64") == 4
    assert AVX512.lanes("int8") == 64
    assert NEON.lanes("float16") == 8


def test_bare_metal_cortex_m_has_no_float_vectors():
    isa = vector_isa("c -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4")
    assert isa.name == "scalar" and isa.lanes("float32") == 1


def test_current_target_is_used():
    with Target("llvm -mcpu=skylake-avx512"):
        assert vector_isa() == AVX512
