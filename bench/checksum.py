"""The cost of verifying a model's checksums at load: a graph-executor model whose params are
about as large as ResNet-50's (a 3840 x 3072 float32 dense weight, 47 MB) is exported as one
.so, then loaded in fresh processes (a library stays loaded for the life of a process) with
the checksums verified and with MR_SKIP_CHECKSUM=1, beside the time to read the file once
(from the page cache, as the loads do). Each figure is the median of `--repeat` processes.

    python bench/checksum.py [--repeat 7] [--rows 3840] [--cols 3072]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

# Prints the seconds one step takes in a fresh process: reading the file, or loading it.
PROBE = r"""
import sys, time
step, path = sys.argv[1], sys.argv[2]
if step == "read":
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    print(time.perf_counter() - t0)
else:
    import microruntime as mr
    t0 = time.perf_counter()
    mr.load_module(path)
    print(time.perf_counter() - t0)
"""


def export_model(path, rows, cols):
    from compiler import relax, relay
    from compiler.relax import op as R
    from compiler.relax.struct_info import TensorStructInfo

    x = relax.Var("x", TensorStructInfo((1, cols), "float32"))
    w = relax.Var("w", TensorStructInfo((rows, cols), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit_output(R.nn.dense(x, w))
        bb.emit_func_output(y)
    weights = np.random.default_rng(0).standard_normal((rows, cols)).astype("float32")
    relay.build(bb.get(), target="llvm", params={"w": weights}).export_library(path)


def median_seconds(step, path, repeat, **env):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **env)
    times = [float(subprocess.run([sys.executable, "-c", PROBE, step, path], env=env,
                                  check=True, stdout=subprocess.PIPE, text=True).stdout)
             for _ in range(repeat)]
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rows", type=int, default=3840)
    parser.add_argument("--cols", type=int, default=3072)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kiln_bench_checksum_") as tmp:
        path = os.path.join(tmp, "model.so")
        export_model(path, args.rows, args.cols)
        mb = os.path.getsize(path) / 1e6
        read = median_seconds("read", path, args.repeat)
        checked = median_seconds("load", path, args.repeat)
        skipped = median_seconds("load", path, args.repeat, MR_SKIP_CHECKSUM="1")
    cost = checked - skipped
    print(f"model.so: {mb:.1f} MB (params {args.rows * args.cols * 4 / 1e6:.1f} MB), "
          f"median of {args.repeat} fresh processes")
    print(f"  read the file once:                 {read * 1e3:8.1f} ms")
    print(f"  load_module, checksums verified:    {checked * 1e3:8.1f} ms")
    print(f"  load_module, MR_SKIP_CHECKSUM=1:    {skipped * 1e3:8.1f} ms")
    print(f"  verification: {cost * 1e3:.1f} ms "
          f"({mb / 1e3 / cost if cost > 0 else float('inf'):.2f} GB/s, "
          f"{100 * cost / skipped if skipped > 0 else 0:.0f}% of the load)")


if __name__ == "__main__":
    main()
