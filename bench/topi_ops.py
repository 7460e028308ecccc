"""topi operators with their x86 schedules: GFLOP/s of the "c" and "llvm" targets beside
numpy in the same run, 1 and 2 runtime threads (each count in its own subprocess).

    dense      [M, K] x [N, K]^T, topi.x86.dense_pack + schedule_dense, numpy: x @ w.T
    conv2d     ResNet-like 3x3, 64 -> 64 channels, 56x56, pad 1, + bias + relu fused,
               topi.x86.schedule_conv2d_nchw; numpy: im2col (pad, gather the 9 shifted
               planes) then one matmul

    python bench/topi_ops.py [--n 1024] [--repeat 5] [--ops dense,conv2d]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _dense(n):
    from compiler import te, topi

    x = te.placeholder((n, n), name="x")
    w = te.placeholder((n, n), name="w")
    y = topi.x86.dense_pack(x, w)
    return topi.x86.schedule_dense([y]), [x, w, y], 2.0 * n ** 3


def _conv2d():
    from compiler import te, topi

    x = te.placeholder((1, 64, 56, 56), name="x")
    w = te.placeholder((64, 64, 3, 3), name="w")
    b = te.placeholder((64, 1, 1), name="b")
    y = topi.nn.relu(topi.add(topi.nn.conv2d_nchw(x, w, 1, 1, 1), b))
    return topi.x86.schedule_conv2d_nchw([y]), [x, w, b, y], 2.0 * 64 * 64 * 9 * 56 * 56


def _numpy_dense(arrays):
    x, w = arrays
    return lambda: x @ w.T


def _numpy_conv2d(arrays):
    import numpy as np

    x, w, b = arrays
    wm = w.reshape(64, -1)

    def run():
        xp = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
        cols = np.stack([xp[:, i:i + 56, j:j + 56] for i in range(3) for j in range(3)], 1)
        return np.maximum(wm @ cols.reshape(64 * 9, -1) + b.reshape(64, 1), 0)

    return run


def measure(op, target, n, repeat):
    """Runs in the subprocess: {"gflops", "numpy_gflops", "compile_s"}."""
    import numpy as np

    import compiler
    import microruntime

    s, args, flops = _dense(n) if op == "dense" else _conv2d()
    t0 = time.perf_counter()
    mod = compiler.build(s, args, target=target, name="f")
    compile_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    arrays = [rng.random([int(d) for d in a.shape], dtype="float32") for a in args[:-1]]
    out = np.zeros([int(d) for d in args[-1].shape], "float32")
    nd = [microruntime.nd.array(a) for a in arrays + [out]]
    ref_fn = _numpy_dense(arrays) if op == "dense" else _numpy_conv2d(arrays)
    mod["f"](*nd)
    np.testing.assert_allclose(nd[-1].numpy().reshape(-1), ref_fn().reshape(-1), rtol=1e-3)

    def best(fn):
        fn()
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return flops / min(times) / 1e9

    return {"gflops": best(lambda: mod["f"](*nd)), "numpy_gflops": best(ref_fn),
            "compile_s": compile_s}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024, help="dense size (M = N = K)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--ops", default="dense,conv2d")
    p.add_argument("--child", help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.child:
        op, target = opts.child.split(":")
        print(json.dumps(measure(op, target, opts.n, opts.repeat)))
        return
    print(f"topi x86 schedules, float32, best of {opts.repeat}; dense {opts.n}^3, conv2d "
          "1x64x56x56 * 64x64x3x3 pad 1 + bias + relu")
    print(f"{'op':>7} {'threads':>7} {'target':>6} {'GFLOP/s':>9} {'numpy':>9} {'compile s':>10}")
    for op in opts.ops.split(","):
        for threads in (1, 2):
            env = dict(os.environ, MR_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                       OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                       PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            for target in ("c", "llvm"):
                out = subprocess.run([sys.executable, __file__, "--child", f"{op}:{target}",
                                      "--n", str(opts.n), "--repeat", str(opts.repeat)],
                                     env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"{op:>7} {threads:>7} {target:>6} failed: "
                          f"{out.stderr.strip()[-300:]}")
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{op:>7} {threads:>7} {target:>6} {r['gflops']:>9.1f} "
                      f"{r['numpy_gflops']:>9.1f} {r['compile_s']:>10.2f}")


if __name__ == "__main__":
    main()
