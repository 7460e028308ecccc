"""1024² float32 matmul: GFLOP/s of the "c" and "llvm" targets beside numpy, in the same run,
with 1 and 2 runtime threads (MR_NUM_THREADS, each count in its own subprocess), plus the
compile time (compiler.build wall time) of each target and the number of FMA instructions
(`vfmadd*`, x86) in its assembly (`get_source("asm")`).

One schedule for both targets, topi.x86.blocked_gemm: 32x32 tiles of C, parallel over row
blocks (serial with --serial), a 4-row register block unrolled inside the k loop, 32 columns as
one float32x32 vector.

    python bench/gemm.py [--n 1024] [--repeat 5] [--serial]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def schedule(n, parallel=True):
    from compiler import te, topi

    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = topi.nn.matmul(A, B)
    s = te.create_schedule(C.op)
    topi.x86.blocked_gemm(s, C, rows=4, cols=32, row_block=32, parallel=parallel)
    return s, [A, B, C]


def fma_count(asm: str) -> int:
    """FMA instructions (vfmadd*, x86) in assembly text."""
    return len(re.findall(r"^\s*vfmadd\w*\s", asm, re.MULTILINE))


def measure(target, n, repeat, parallel=True):
    """Runs in the subprocess: {"compile_s", "gflops", "numpy_gflops", "fma"} for one
    target."""
    import numpy as np

    import compiler
    import microruntime

    s, args = schedule(n, parallel)
    t0 = time.perf_counter()
    mod = compiler.build(s, args, target=target, name="mm")
    compile_s = time.perf_counter() - t0
    a = np.random.rand(n, n).astype("float32")
    b = np.random.rand(n, n).astype("float32")
    A, B, C = (microruntime.nd.array(x) for x in (a, b, np.zeros((n, n), "float32")))
    mod["mm"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-3)
    flops = 2.0 * n ** 3

    def best(fn):
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return flops / min(times) / 1e9

    return {"compile_s": compile_s, "gflops": best(lambda: mod["mm"](A, B, C)),
            "numpy_gflops": best(lambda: a @ b), "fma": fma_count(mod.get_source("asm"))}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--serial", action="store_true", help="no parallel loop in the schedule")
    p.add_argument("--child", help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.child:
        print(json.dumps(measure(opts.child, opts.n, opts.repeat, not opts.serial)))
        return
    print(f"matmul {opts.n}x{opts.n} float32, best of {opts.repeat}"
          + (", serial schedule" if opts.serial else ""))
    print(f"{'threads':>7} {'target':>6} {'GFLOP/s':>9} {'numpy':>9} {'compile s':>10} "
          f"{'FMA':>5}")
    for threads in (1, 2):
        env = dict(os.environ, MR_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                   PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for target in ("c", "llvm"):
            out = subprocess.run([sys.executable, __file__, "--child", target, "--n",
                                  str(opts.n), "--repeat", str(opts.repeat)]
                                 + (["--serial"] if opts.serial else []), env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{threads:>7} {target:>6} failed: {out.stderr.strip()[-300:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{threads:>7} {target:>6} {r['gflops']:>9.1f} {r['numpy_gflops']:>9.1f} "
                  f"{r['compile_s']:>10.2f} {r['fma']:>5}")


if __name__ == "__main__":
    main()
