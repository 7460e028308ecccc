"""Latency of whole models on the graph executor (relay.build, llvm) beside numpy (the
graph-level reference interpreter, whose kernels are numpy calls), batch 1, with 1 and 2
runtime threads (each count in its own process, which loads the exported .so and imports no
compiler). Then the per-kernel profile of the slowest model.

    python bench/models.py [--repeat 20] [--target llvm]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# Sizes for timing: the test sizes are too small to measure.
MODELS = {
    "mlp": dict(batch=1, features=784, hidden=256, classes=10),
    "conv_bn_relu_pool_dense": dict(batch=1, channels=3, size=32, filters=32, classes=10),
    "residual_block": dict(batch=1, channels=64, size=28),
    "depthwise_separable_block": dict(batch=1, channels=64, size=28, filters=128),
    "attention_block": dict(batch=1, seq=64, dim=128, heads=4),
}

CHILD = r"""
import json, sys, time, statistics
import numpy as np
import microruntime as mr
from microruntime import graph_executor
spec = json.loads(sys.argv[1])
out = {}
for name, item in spec.items():
    gm = graph_executor.GraphModule(mr.load_module(item["so"])["default"](mr.cpu()))
    inputs = {k: np.load(v) for k, v in item["inputs"].items()}
    gm.set_input(**inputs)
    r = gm.benchmark(mr.cpu(), repeat=item["repeat"], number=item["number"])
    out[name] = {"median_ms": r.median * 1e3, "min_ms": r.min * 1e3}
    if item.get("profile"):
        out[name]["profile"] = str(gm.profile().table(sort=True, aggregate=False))
print(json.dumps(out))
"""


def numpy_ms(model, inputs, repeat):
    from compiler.relax import interpreter
    args = model.args(inputs)
    interpreter.run(model.mod, *args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        interpreter.run(model.mod, *args)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--target", default="llvm")
    args = ap.parse_args()
    import numpy as np

    from compiler import relay
    from compiler.relax.testing import models

    work = tempfile.mkdtemp(prefix="kiln_bench_models_")
    spec, built, ref = {}, {}, {}
    for name, kw in MODELS.items():
        m = getattr(models, name)(**kw)
        t0 = time.perf_counter()
        lib = relay.build(m.mod, target=args.target, params=m.params)
        so = os.path.join(work, f"{name}.so")
        lib.export_library(so)
        built[name] = time.perf_counter() - t0
        inputs = m.inputs(seed=0)
        paths = {}
        for k, v in inputs.items():
            paths[k] = os.path.join(work, f"{name}_{k}.npy")
            np.save(paths[k], v)
        spec[name] = {"so": so, "inputs": paths, "repeat": args.repeat, "number": 5}
        ref[name] = numpy_ms(m, inputs, max(3, args.repeat // 4))
    results = {}
    for threads in (1, 2):
        env = dict(os.environ, MR_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads), PYTHONPATH=ROOT)
        out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env,
                             capture_output=True, text=True, cwd=ROOT)
        if out.returncode != 0:
            sys.exit(f"benchmark child failed: {out.stderr[-2000:]}")
        results[threads] = json.loads(out.stdout)
    print(f"{'model':<28}{'kiln 1T ms':>11}{'kiln 2T ms':>11}{'numpy ms':>10}"
          f"{'x numpy 1T':>11}{'compile s':>10}")
    for name in MODELS:
        k1, k2 = results[1][name]["median_ms"], results[2][name]["median_ms"]
        print(f"{name:<28}{k1:>11.3f}{k2:>11.3f}{ref[name]:>10.3f}{ref[name] / k1:>11.1f}"
              f"{built[name]:>10.1f}")
    slowest = max(MODELS, key=lambda n: results[1][n]["median_ms"])
    spec1 = {slowest: dict(spec[slowest], profile=True)}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec1)], capture_output=True,
                         text=True, cwd=ROOT,
                         env=dict(os.environ, MR_NUM_THREADS="1", PYTHONPATH=ROOT))
    print(f"\nper-kernel profile of the slowest model ({slowest}, 1 thread):")
    print(json.loads(out.stdout)[slowest]["profile"] if out.returncode == 0 else out.stderr)


if __name__ == "__main__":
    main()
