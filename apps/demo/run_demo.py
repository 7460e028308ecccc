"""`make demo`: compile kernels with Kiln, export them, and run them where they will be deployed.

1. compile a vector add with a symbolic length and a scheduled 512x512 matmul (split, reorder,
   vectorize, parallel) for target "c" (and "llvm" when available); export each as a `.so`;
2. run the `.so` files in a fresh Python process that imports only `microruntime` (never the
   compiler), checking against numpy and timing them beside numpy;
3. build the `--system-lib` static library and the C app of apps/system_lib_deploy and run it
   (no Python, no dlopen).

    python apps/demo/run_demo.py [--out build/demo]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

MATMUL_N = 512

RUNNER = r"""
import sys, time
import numpy as np
import microruntime as mr
assert "compiler" not in sys.modules

def best(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return min(times)

out = sys.argv[1]
for target in sys.argv[2].split(","):
    vadd = mr.load_module(f"{out}/vadd_{target}.so")["vadd"]
    for n in (7, 1 << 20):
        a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
        ta, tb, tc = mr.nd.array(a), mr.nd.array(b), mr.nd.array(np.zeros(n, "float32"))
        t = best(lambda: vadd(ta, tb, tc))
        ok = np.array_equal(tc.numpy(), a + b)
        t_np = best(lambda: np.add(a, b))
        print(f"  [{target:4}] vadd n={n:<8} matches numpy: {ok}   kiln {t*1e6:9.1f} us   "
              f"numpy {t_np*1e6:9.1f} us")
    mm = mr.load_module(f"{out}/matmul_{target}.so")["matmul"]
    n = int(sys.argv[3])
    a, b = np.random.rand(n, n).astype("float32"), np.random.rand(n, n).astype("float32")
    ta, tb, tc = mr.nd.array(a), mr.nd.array(b), mr.nd.array(np.zeros((n, n), "float32"))
    t = best(lambda: mm(ta, tb, tc))
    err = float(np.abs(tc.numpy() - a @ b).max())
    t_np = best(lambda: a @ b)
    gf = 2 * n ** 3 / 1e9
    print(f"  [{target:4}] matmul {n}x{n}   max |err| {err:.1e}   kiln {t*1e3:7.2f} ms "
          f"({gf/t:5.1f} GFLOP/s)   numpy {t_np*1e3:7.2f} ms ({gf/t_np:5.1f} GFLOP/s)")
    try:
        vadd(ta, tb)
    except TypeError as err:
        print(f"  [{target:4}] a wrong call raises TypeError: {str(err).splitlines()[0]}")
print("  the compiler was never imported:", "compiler" not in sys.modules)
"""


def kernels():
    from compiler import te, topi

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    vadd = (te.create_schedule(C.op), [A, B, C])

    A = te.placeholder((MATMUL_N, MATMUL_N), name="A")
    B = te.placeholder((MATMUL_N, MATMUL_N), name="B")
    C = topi.nn.matmul(A, B)
    # 32x32 tiles, a 4-row register block unrolled inside k, 32 columns as one vector,
    # parallel over row blocks (the schedule of bench/gemm.py).
    s = te.create_schedule(C.op)
    topi.x86.blocked_gemm(s, C, rows=4, cols=32, row_block=32)
    return {"vadd": vadd, "matmul": (s, [A, B, C])}


def compile_all(out, targets):
    import compiler

    for target in targets:
        for name, (s, args) in kernels().items():
            start = time.perf_counter()
            mod = compiler.build(s, args, target=target, name=name)
            path = os.path.join(out, f"{name}_{target}.so")
            mod.export_library(path)
            print(f"  [{target:4}] {name:<7} -> {os.path.relpath(path, ROOT)}  "
                  f"({(time.perf_counter() - start) * 1e3:.0f} ms to build)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "demo"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from compiler.codegen import host_codegen_available

    targets = ["c"] + (["llvm"] if host_codegen_available("llvm") else [])

    print("== 1. compile and export (compiler)")
    compile_all(args.out, targets)

    print("== 2. run from a fresh Python process that imports only microruntime")
    subprocess.run([sys.executable, "-c", RUNNER, args.out, ",".join(targets), str(MATMUL_N)],
                   check=True, env=dict(os.environ, PYTHONPATH=ROOT))

    print("== 3. system library linked into a C program (no Python, no dlopen)")
    app_dir = os.path.join(ROOT, "apps", "system_lib_deploy")
    subprocess.run(["make", "-s", "-C", app_dir, f"PYTHON={sys.executable}", "build/app"],
                   check=True)
    app = os.path.join(app_dir, "build", "app")
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True).stdout
    print(f"  {os.path.relpath(app, ROOT)} references dlopen: {'dlopen' in undefined}")
    subprocess.run([app], check=True)


if __name__ == "__main__":
    main()
