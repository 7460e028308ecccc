"""Per-call time of a kernel with a parallel loop: microruntime with 1 and 2 threads beside
Apache TVM running the same exported .so.

Kiln compiles C = A + B (float32 vectors, split by 64 with the outer loop parallel; target
"llvm" when available, else "c") for each n and exports it. Each (n, threads) pair is timed in
its own subprocess with MR_NUM_THREADS set; TVM, when a python that can `import tvm` is found
(--tvm-python, $KILN_TVM_PYTHON, or this interpreter), times the same .so in its own process
(both runtimes export the same C symbols) with TVM_NUM_THREADS set, else "n/a (no tvm)".
Small n shows the cost of one parallel launch.

    python bench/parallel_launch.py [--tvm-python PATH] [--calls N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from bench_common import PER_CALL_US, find_tvm_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (256, 4096, 65536)
THREADS = (1, 2)

TIMER = PER_CALL_US + r"""
import json, sys
import numpy as np
so_path, n, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = np.arange(n, dtype="float32")
"""

OURS_SCRIPT = TIMER + r"""
import microruntime as mr
f = mr.load_module(so_path)["add_par"]
a, b, c = mr.nd.array(x), mr.nd.array(x), mr.nd.empty((n,), "float32")
us = per_call_us(f, a, b, c, calls)
np.testing.assert_allclose(c.numpy(), 2 * x)
print(json.dumps(us))
"""

TVM_SCRIPT = TIMER + r"""
import tvm
f = tvm.runtime.load_module(so_path)["add_par"]
a, b = tvm.runtime.tensor(x), tvm.runtime.tensor(x)
c = tvm.runtime.tensor(np.zeros(n, "float32"))
us = per_call_us(f, a, b, c, calls)
np.testing.assert_allclose(c.numpy(), 2 * x)
print(json.dumps(us))
"""


def export_kernel(n, path):
    import compiler
    from compiler import te
    from compiler.build import host_codegen_available

    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    outer, _ = s[C].split(C.op.axis[0], factor=64)
    s[C].parallel(outer)
    target = "llvm" if host_codegen_available("llvm") else "c"
    compiler.build(s, [A, B, C], target=target, name="add_par").export_library(path)
    return target


def time_in_subprocess(python, script, so_path, n, calls, threads):
    env = dict(os.environ, MR_NUM_THREADS=str(threads), TVM_NUM_THREADS=str(threads),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([python, "-c", script, so_path, str(n), str(calls)], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:60]
    return f"{json.loads(out.stdout.strip().splitlines()[-1]):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tvm-python", help="a python that can import tvm")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    sys.path.insert(0, ROOT)
    tvm_python = find_tvm_python(args.tvm_python)
    print(f"{'n':>6} {'threads':>7} {'kiln us/call':>13} {'tvm us/call':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            so_path = os.path.join(tmp, f"add_par_{n}.so")
            target = export_kernel(n, so_path)
            for threads in THREADS:
                ours = time_in_subprocess(sys.executable, OURS_SCRIPT, so_path, n, args.calls,
                                          threads)
                tvm = "n/a (no tvm)"
                if tvm_python:
                    tvm = time_in_subprocess(tvm_python, TVM_SCRIPT, so_path, n, args.calls,
                                             threads)
                print(f"{n:>6} {threads:>7} {ours:>13} {tvm:>13}")
    print(f"(kernel target: {target}; median of 7 runs of {args.calls} calls)")


if __name__ == "__main__":
    main()
