"""Builds the kernels of system_lib_deploy into a static system library.

    python build_kernels.py build/kernels.a [target]      (target defaults to "c")

`target` may cross compile: "llvm -mtriple=aarch64-linux-gnu" writes an AArch64 archive
(tests/apps/test_cross_aarch64.py links it and runs the app under qemu-aarch64).

`vadd` (float32, symbolic length) and `mm` (64x64 float32 matmul: split, reorder, vectorize,
parallel) are built into one IRModule with `--system-lib` and exported as `.a`.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import compiler  # noqa: E402
from compiler import te, topi  # noqa: E402
from compiler.ir import IRModule  # noqa: E402


def vadd():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return compiler.lower(te.create_schedule(C.op), [A, B, C], name="vadd")


def mm(size=64):
    A = te.placeholder((size, size), name="A")
    B = te.placeholder((size, size), name="B")
    k = te.reduce_axis((0, size), name="k")
    C = te.compute((size, size), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    topi.x86.blocked_gemm(s, C, rows=4, cols=8, row_block=16)  # parallel 16-row blocks
    return compiler.lower(s, [A, B, C], name="mm")


def build(target: str = "c"):
    """Both kernels built as one system library for `target` (e.g. "llvm -mtriple=...")."""
    funcs = {}
    for mod in (vadd(), mm()):
        funcs.update(mod.functions)
    return compiler.build(IRModule(funcs), target=f"{target} --system-lib")


def main(out: str, target: str = "c") -> None:
    lib = build(target)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    lib.export_library(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
