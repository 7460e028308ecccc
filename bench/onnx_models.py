"""Latency of the ONNX model builders' models (compiler/frontend/testing/onnx_models.py) compiled
by Kiln (llvm, the graph executor) beside ONNX Runtime, measured in the same run: batch 1 and
16, with 1 and 2 threads (MR_NUM_THREADS for Kiln, intra_op_num_threads for ONNX Runtime),
each thread count in its own process, plus each model's compile time.

    python bench/onnx_models.py [--repeat 10] [--target llvm] [--batches 1,16] [--threads 1,2]
"""
import argparse
import os
import sys
import tempfile
import time

from bench_common import run_per_thread_count

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# Runs in a process per thread count; imports no compiler module.
CHILD = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
import microruntime as mr
from microruntime import graph_executor
spec, threads = json.loads(sys.argv[1]), int(sys.argv[2])
out = {}
for key, item in spec.items():
    inputs = {k: np.load(v) for k, v in item["inputs"].items()}
    gm = graph_executor.GraphModule(mr.load_module(item["so"])["default"](mr.cpu()))
    gm.set_input(**inputs)
    r = gm.benchmark(mr.cpu(), repeat=item["repeat"], number=item["number"])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(item["onnx"], opts, providers=["CPUExecutionProvider"])
    want = sess.run(None, inputs)[0]
    gm.run()
    diff = float(np.abs(gm.get_output(0).numpy() - want).max())
    times = []
    for _ in range(item["repeat"]):
        t = time.perf_counter()
        for _ in range(item["number"]):
            sess.run(None, inputs)
        times.append((time.perf_counter() - t) / item["number"])
    out[key] = {"kiln_ms": r.median * 1e3, "ort_ms": float(np.median(times)) * 1e3,
                "diff": diff}
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    import numpy as np
    import onnx

    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    work = tempfile.mkdtemp(prefix="kiln_bench_onnx_")
    spec, compile_s = {}, {}
    for builder in onnx_models.ALL:
        for batch in batches:
            m = builder(batch=batch)
            key = f"{m.name} b{batch}"
            path = os.path.join(work, f"{m.name}_{batch}")
            onnx.save(m.model, path + ".onnx")
            t0 = time.perf_counter()
            mod, params = from_onnx(m.model, shape=m.input_shapes)
            relay.build(mod, target=args.target, params=params).export_library(path + ".so")
            compile_s[key] = time.perf_counter() - t0
            files = {}
            for name, x in m.inputs(seed=0).items():
                files[name] = f"{path}_{name}.npy"
                np.save(files[name], x)
            spec[key] = {"so": path + ".so", "onnx": path + ".onnx", "inputs": files,
                         "repeat": args.repeat, "number": 10 if batch == 1 else 3}
            print(f"compiled {key} in {compile_s[key]:.1f} s", file=sys.stderr, flush=True)
    results = run_per_thread_count(CHILD, spec, threads, ROOT)
    head = f"{'model':<22}{'compile s':>10}"
    for t in threads:
        head += f"{f'kiln {t}T ms':>14}{f'ort {t}T ms':>13}{'ort/kiln':>10}"
    print(head + f"{'max|diff|':>11}")
    for key in spec:
        row = f"{key:<22}{compile_s[key]:>10.1f}"
        for t in threads:
            r = results[t][key]
            row += f"{r['kiln_ms']:>14.4f}{r['ort_ms']:>13.4f}{r['ort_ms'] / r['kiln_ms']:>10.2f}"
        print(row + f"{max(results[t][key]['diff'] for t in threads):>11.1e}")
    print(f"(median of {args.repeat} measurements; target {args.target}; ort/kiln > 1 means "
          "Kiln is faster; ONNX Runtime's time includes its Python call overhead, as Kiln's "
          "benchmark does not)")


if __name__ == "__main__":
    main()
