"""Latency of the zoo's models: Kiln (the library `check.py` compiled, build/zoo/<name>/kiln.so,
run by the graph executor in a process that imports only the runtime) beside ONNX Runtime
(default session options, intra_op_num_threads = the thread count) on the same inputs, batch 1,
at each thread count. Each runtime is timed alone in its own process; a sample is the best of
--repeat runs after --warmup seconds of untimed runs, and the two runtimes alternate for
--rounds rounds (the median of the rounds is printed). Prints one line per model and thread
count (Kiln ms, ONNX Runtime ms, kiln/ort: below 1, Kiln is faster) and the geometric mean of
kiln/ort per thread count. A model without a compiled library (run check.py first), or built
for the VM, is listed as skipped. With --baseline DIR (a zoo whose kiln.so files an older
compiler built), that library is timed in the same rounds too, alternating with the two
others, and its ms and ratio to ONNX Runtime are printed beside: before and after a change, in
one run.

The warm-up is for the machine, not the runtimes: on a virtual machine the host may run the
two virtual CPUs of a process that has just started on one physical core for its first tenths
of a second (two AVX-512 loops started together on the two CPUs ran at half speed each for
10-200 ms, then at full speed), so a second thread gains nothing until then. ONNX Runtime
spends that long creating its session; Kiln's graph executor loads in milliseconds, and
without a warm-up its two-thread samples of small models fell in that window at random.

    .venv/bin/python bench/zoo/speed.py [--zoo build/zoo] [--only resnet18,convnext_tiny]
                                        [--threads 1 2] [--rounds 3] [--repeat 5]
                                        [--baseline other_zoo] [--warmup 0.5]
"""
import argparse
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KILN = r"""
import sys, time, numpy as np, microruntime as mr
from microruntime import graph_executor
gm = graph_executor.GraphModule(mr.load_module(sys.argv[1])["default"](mr.cpu()))
x = np.load(sys.argv[2])
for k in x.files:
    gm.set_input(k, x[k])
gm.run()
end = time.perf_counter() + float(sys.argv[4])
while time.perf_counter() < end:
    gm.run()
best = 1e9
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); gm.run(); best = min(best, time.perf_counter() - t)
print(best * 1e3)
"""

ORT = r"""
import sys, time, numpy as np, onnxruntime as ort
o = ort.SessionOptions(); o.intra_op_num_threads = int(sys.argv[4])
s = ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
x = np.load(sys.argv[2]); feeds = {k: x[k] for k in x.files}
s.run(None, feeds)
end = time.perf_counter() + float(sys.argv[5])
while time.perf_counter() < end:
    s.run(None, feeds)
best = 1e9
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); s.run(None, feeds); best = min(best, time.perf_counter() - t)
print(best * 1e3)
"""


def _is_graph_library(path: str) -> bool:
    with open(path, "rb") as f:
        return b"GraphExecutorFactory" in f.read()


def _time(code, args, threads):
    env = dict(os.environ, MR_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, check=False, timeout=1200)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=float, default=0.5,
                    help="seconds of untimed runs before the timed ones (default 0.5)")
    ap.add_argument("--baseline", default="",
                    help="a zoo of libraries built otherwise, timed in the same rounds")
    args = ap.parse_args()
    names = sorted(n for n in os.listdir(args.zoo) if os.path.isdir(os.path.join(args.zoo, n)))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    ratios = {t: [] for t in args.threads}
    base_ratios = {t: [] for t in args.threads}
    print(f"{'model':28s} {'threads':>7s} {'kiln ms':>10s} {'ort ms':>10s} {'kiln/ort':>9s}"
          + (f" {'base ms':>10s} {'base/ort':>9s}" if args.baseline else ""))
    for name in names:
        d = os.path.join(args.zoo, name)
        lib, onnx_path, inputs = (os.path.join(d, f) for f in
                                  ("kiln.so", "model.onnx", "inputs.npz"))
        if not (os.path.exists(lib) and os.path.exists(inputs)):
            print(f"{name:28s} skipped: no kiln.so (run bench/zoo/check.py first)")
            continue
        if not _is_graph_library(lib):
            print(f"{name:28s} skipped: built for the Relax VM")
            continue
        base = os.path.join(args.baseline, name, "kiln.so") if args.baseline else None
        if base and not os.path.exists(base):
            print(f"{name:28s} skipped: no baseline {base}")
            continue
        for t in args.threads:
            try:
                kiln, ort, before = [], [], []
                runs = (str(args.repeat), str(args.warmup))
                for _ in range(args.rounds):
                    kiln.append(_time(KILN, [lib, inputs, *runs], t))
                    ort.append(_time(ORT, [onnx_path, inputs, runs[0], str(t), runs[1]], t))
                    if base:
                        before.append(_time(KILN, [base, inputs, *runs], t))
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                print(f"{name:28s} {t:>7d} failed: {err}")
                continue
            k, o = statistics.median(kiln), statistics.median(ort)
            ratios[t].append(k / o)
            extra = ""
            if base:
                b = statistics.median(before)
                base_ratios[t].append(b / o)
                extra = f" {b:>10.2f} {b / o:>9.2f}"
            print(f"{name:28s} {t:>7d} {k:>10.2f} {o:>10.2f} {k / o:>9.2f}{extra}", flush=True)
    for label, table in (("kiln/ort", ratios), ("base/ort", base_ratios)):
        for t, rs in table.items():
            if rs:
                gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
                print(f"geometric mean {label} at {t} thread(s): {gm:.2f} over {len(rs)} models "
                      f"(worst {max(rs):.2f})")


if __name__ == "__main__":
    main()
