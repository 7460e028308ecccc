"""The generated C text is a contract: one kernel's full C file is compared with a golden file.

Regenerate after an intended change with:  KILN_UPDATE_GOLDEN=1 pytest tests/compiler/codegen
and review the diff of tests/compiler/codegen/golden/.
"""
import os

from compiler.build import host_passes
from compiler.codegen.c_family.c import generate_c
from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.target import Target
from compiler.tir import (
    Broadcast,
    BufferStore,
    For,
    ForKind,
    PrimFunc,
    Ramp,
    SizeVar,
    Var,
    const,
    decl_buffer,
)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def scale_add_module() -> IRModule:
    """C[i*4 : i*4+4] = A[...] * 2 + B[...], i parallel over n/4 (a hand-built PrimFunc, so the
    text depends only on the host passes and the C codegen)."""
    n = SizeVar("n", "int32")
    A, B, C = (decl_buffer((n,), "float32", name) for name in "ABC")
    pa, pb, pc = Var("A", handle), Var("B", handle), Var("C", handle)
    i = Var("i")
    idx = Ramp(i * 4, const(1), 4)
    value = A[idx] * Broadcast(const(2.0), 4) + B[idx]
    body = For(i, const(0), n // 4, ForKind.PARALLEL, BufferStore(C, value, (idx,)))
    func = PrimFunc((pa, pb, pc), body, ((pa, A), (pb, B), (pc, C)),
                    {"global_symbol": "scale_add", "tir.noalias": True})
    return IRModule({"scale_add": func})


def check_golden(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("KILN_UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        expected = f.read()
    assert text == expected, (f"generated C differs from {path}; if intended, regenerate with "
                              "KILN_UPDATE_GOLDEN=1")


def test_scale_add_c_text():
    target = Target("c")
    check_golden("scale_add.c", generate_c(host_passes(scale_add_module(), target), target))


def test_scale_add_system_lib_c_text():
    target = Target("c --system-lib-prefix=demo_")
    check_golden("scale_add_system_lib.c",
                 generate_c(host_passes(scale_add_module(), target), target))
