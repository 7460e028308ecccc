"""Is the runtime's thread pool worth its threads on small models? Each model runs with
MR_NUM_THREADS=1 and =2, every run in its own process, the two alternating (1, 2, 1, 2, ...), so
that a machine whose speed drifts moves both; the figure is the median over the rounds of each
run's median latency, with the ratio 2 threads / 1 thread (below 1: the second thread helps),
beside ONNX Runtime with intra_op_num_threads 1 and 2, measured in the same processes.

    python bench/threads.py [--models squeezenet1_1,...] [--rounds 5] [--repeat 10]
                            [--number 20] [--cache build/bench_threads]

The models are the zoo's (build/zoo/NAME/model.onnx), compiled once with
`python -m compiler compile` into --cache (again when the .onnx is newer); --so NAME=FILE uses an
already compiled library instead.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_MODELS = ("shufflenet_v2_x1_0", "squeezenet1_1", "mobilenet_v3_small", "t5_encoder",
                "whisper_encoder")

# One process per (model, thread count); imports no compiler module.
CHILD = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
import microruntime as mr
from microruntime import graph_executor
so, onnx_path, repeat, number, seed = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
WARMUP_MS = 500  # untimed runs first (bench/zoo/speed.py says why)
rng = np.random.default_rng(seed)
inputs = {}
for i in graph_executor.read_manifest(so)["inputs"]:
    dtype = np.dtype(i["dtype"])
    inputs[i["name"]] = (rng.standard_normal(i["shape"]).astype(dtype) if dtype.kind == "f"
                         else rng.integers(0, 10, i["shape"]).astype(dtype))
gm = graph_executor.GraphModule(mr.load_module(so)["default"](mr.cpu()))
gm.set_input(**inputs)
gm.benchmark(mr.cpu(), repeat=1, number=1, min_repeat_ms=WARMUP_MS)
kiln = gm.benchmark(mr.cpu(), repeat=repeat, number=number).median
opts = ort.SessionOptions()
opts.intra_op_num_threads = mr.num_threads()
opts.inter_op_num_threads = 1
sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
end = time.perf_counter() + WARMUP_MS / 1e3
while time.perf_counter() < end:
    sess.run(None, inputs)
times = []
for _ in range(repeat):
    t = time.perf_counter()
    for _ in range(number):
        sess.run(None, inputs)
    times.append((time.perf_counter() - t) / number)
print(json.dumps({"threads": mr.num_threads(), "kiln_ms": kiln * 1e3,
                  "ort_ms": float(np.median(times)) * 1e3}))
"""


def compile_model(name, cache):
    onnx_path = os.path.join(ROOT, "build", "zoo", name, "model.onnx")
    if not os.path.isfile(onnx_path):
        sys.exit(f"threads.py: no {onnx_path} (the zoo models are made by bench/zoo)")
    so = os.path.join(cache, f"{name}.so")
    if not os.path.isfile(so) or os.path.getmtime(so) < os.path.getmtime(onnx_path):
        print(f"compiling {name} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "compiler", "compile", onnx_path, "-o", so,
                        "--quiet"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    return so, onnx_path


def measure(so, onnx_path, threads, args, seed):
    env = dict(os.environ, PYTHONPATH=ROOT, MR_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", CHILD, so, onnx_path, str(args.repeat),
                          str(args.number), str(seed)], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(SMALL_MODELS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench_threads"))
    ap.add_argument("--so", action="append", default=[], metavar="NAME=FILE",
                    help="use this compiled library for model NAME")
    args = ap.parse_args()
    given = dict(s.split("=", 1) for s in args.so)
    os.makedirs(args.cache, exist_ok=True)
    models = [m for m in args.models.split(",") if m]
    libs = {}
    for name in models:
        if name in given:
            libs[name] = (given[name], os.path.join(ROOT, "build", "zoo", name, "model.onnx"))
        else:
            libs[name] = compile_model(name, args.cache)

    print(f"{'model':<22} {'kiln 1T ms':>11} {'kiln 2T ms':>11} {'2T/1T':>7}   "
          f"{'ORT 1T ms':>10} {'ORT 2T ms':>10} {'2T/1T':>7}")
    for name in models:
        runs = {1: [], 2: []}
        for r in range(args.rounds):
            for threads in (1, 2):
                runs[threads].append(measure(*libs[name], threads, args, seed=r))
        med = {t: {k: float(np.median([x[k] for x in runs[t]])) for k in ("kiln_ms", "ort_ms")}
               for t in runs}
        print(f"{name:<22} {med[1]['kiln_ms']:>11.4f} {med[2]['kiln_ms']:>11.4f} "
              f"{med[2]['kiln_ms'] / med[1]['kiln_ms']:>7.2f}   {med[1]['ort_ms']:>10.4f} "
              f"{med[2]['ort_ms']:>10.4f} {med[2]['ort_ms'] / med[1]['ort_ms']:>7.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
