"""The tuner on a model, in one run: its convolution (and dense/matmul) tasks tuned within a
time budget on a 2-process local pool, each task's GFLOP/s with the default schedule and with
the best config found (both measured again here, the same way), the model's end-to-end
latency with default and tuned kernels beside ONNX Runtime (default session options; each
runtime in a process of its own that imports no compiler), and the tuner's throughput
(trials per second) on the local pool, on a 2-worker Dask LocalCluster, and on that cluster
through RemoteRunner (built here, timed on the workers).

    python bench/tune.py [--model resnet18|mlp] [--tasks 1,4,7,10] [--trials 48]
                         [--budget-s 420] [--throughput-trials 8] [--throughput-task N]
                         [--tuner xgb] [--no-dask]

resnet18: bench/models.py's ResNet-18 at 224x224, batch 1 (onnx.helper, random weights): its
conv tasks in NCHW[x]c (what convert_layout_nchwc gives a CPU build) and the fc. mlp: an MLP
of Gemm/MatMul layers (its GEMM tasks). Tasks are numbered as printed; --tasks tunes a subset
(the others keep the defaults). Built for the graph executor on llvm.
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
sys.path.insert(0, os.path.join(ROOT, "bench"))

# one runtime's latency, in a process of its own: argv = kind ("kiln" | "ort"), model file
# (.so | .onnx), inputs (.npz), repeat, number, output file (.npy)
CHILD = r"""
import sys, time
import numpy as np
kind, path, npz, repeat, number, out = sys.argv[1:]
inputs = dict(np.load(npz))
repeat, number = int(repeat), int(number)
if kind == "kiln":
    import microruntime as mr
    from microruntime import graph_executor
    gm = graph_executor.GraphModule(mr.load_module(path)["default"](mr.cpu()))
    gm.set_input(**inputs)
    gm.run()
    got = gm.get_output(0).numpy()
    times = [gm.benchmark(mr.cpu(), repeat=1, number=number).median for _ in range(repeat)]
else:
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, inputs)[0]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            sess.run(None, inputs)
        times.append((time.perf_counter() - t) / number)
np.save(out, got)
print(float(np.median(times)) * 1e3)
"""


def _latency_ms(kind, path, npz, work, repeat, number):
    out = os.path.join(work, f"out_{kind}_{os.path.basename(path)}.npy")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, path, npz, str(repeat),
                           str(number), out], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} run failed: {proc.stderr[-2000:]}")
    import numpy as np
    return float(proc.stdout.strip().splitlines()[-1]), np.load(out)


def _throughput(task, executor, trials, workers, seed):
    """Trials per second of a random search on `executor`, after one warm-up trial per
    worker (process start, imports and the reference kernel's build are not counted)."""
    from compiler import autotvm
    from compiler.autotvm.measure import measure
    from compiler.autotvm.tuner import RandomTuner

    option = autotvm.measure_option(number=3, repeat=3)
    warm = [executor.submit(measure, task, i, option) for i in range(workers)]
    for f in warm:
        f.result()
    tuner = RandomTuner(task, seed=seed)
    tuner.visited.update(range(workers))
    t = time.perf_counter()
    tuner.tune(trials, option, executor=executor, parallel=workers, measure_default=False)
    return tuner.trials / (time.perf_counter() - t)


def _model(name):
    if name == "resnet18":
        from models import resnet18

        m = resnet18(batch=1, size=224, classes=1000)
        return m, m.input_shapes, "ResNet-18 224x224 batch 1"
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=64, features=256, hidden=512, classes=128)
    return m, {"x": (64, 256)}, "MLP batch 64, 256 -> 512 -> 128"


def _short(task):
    a = task.args
    if task.name.startswith(("conv2d", "depthwise")):
        (_, icb, h, w, ib), (ocb, _, kh, kw, _, ob), (sh, _) = a[0], a[1], a[2]
        return f"{task.name.split('.')[0]} {icb * ib}->{ocb * ob} {h}x{w} k{kh}x{kw} s{sh}"
    return f"{task.name} {a[0]}x{a[1]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet18", choices=["resnet18", "mlp"])
    ap.add_argument("--tasks", default=None,
                    help="comma-separated task numbers to tune (default: all)")
    ap.add_argument("--trials", type=int, default=48, help="trials per task at most")
    ap.add_argument("--budget-s", type=float, default=420.0,
                    help="time for all tasks' tuning (split evenly)")
    ap.add_argument("--throughput-trials", type=int, default=8)
    ap.add_argument("--throughput-task", type=int, default=None,
                    help="the task number the throughput is measured on (default: the "
                         "smallest convolution tuned, else the first task tuned)")
    ap.add_argument("--tuner", default="xgb", choices=["xgb", "random", "grid"])
    ap.add_argument("--repeat", type=int, default=15, help="end-to-end timing repeats")
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import onnx

    from compiler import autotvm, relay
    from compiler.autotvm.executors import InlineExecutor, dask_executor, local_executor
    from compiler.autotvm.extract import task_counts
    from compiler.autotvm.measure import measure
    from compiler.autotvm.remote import RemoteRunner
    from compiler.autotvm.tuner import TUNERS
    from compiler.frontend import from_onnx

    m, shapes, title = _model(args.model)
    work = tempfile.mkdtemp(prefix="kiln_bench_tune_")
    onnx_path = os.path.join(work, "model.onnx")
    onnx.save(m.model, onnx_path)
    log = os.path.join(work, "tune.jsonl")
    mod, params = from_onnx(m.model, shape=shapes)
    counts = task_counts(mod, params, "llvm")
    all_tasks = list(counts)
    chosen = [int(k) for k in args.tasks.split(",")] if args.tasks else range(len(all_tasks))
    tasks = [all_tasks[k] for k in chosen]
    print(f"model: {title}; {len(all_tasks)} tasks, tuning {len(tasks)} "
          f"({args.tuner}, <= {args.trials} trials, {args.budget_s:.0f} s in all); "
          f"{os.cpu_count()} CPUs; log {log}")

    option = autotvm.measure_option(number=5, repeat=3)
    per_task = args.budget_s / max(1, len(tasks))
    rows = []
    t_tune = time.perf_counter()
    with local_executor(2) as pool:
        for task in tasks:
            tuner = TUNERS[args.tuner](task)
            t = time.perf_counter()
            tuner.tune(args.trials, option, executor=pool, parallel=2, time_limit_s=per_task,
                       callbacks=[autotvm.callback.log_to_file(log),
                                  autotvm.callback.progress_bar(f"  {_short(task)}: ",
                                                                every_s=15)])
            rows.append((task, tuner, time.perf_counter() - t))
    t_tune = time.perf_counter() - t_tune

    print("\nper task (GFLOP/s of the anchor alone, measured again in this run: default and "
          "tuned interleaved, the better of 2 measurements of 5 x 3 runs each):")
    print(f"  {'#':>2s} {'task':38s} {'x':>2s} {'space':>5s} {'trials':>6s} {'errors':>6s} "
          f"{'default':>8s} {'tuned':>8s} {'speedup':>7s}")
    inline = InlineExecutor()
    for task, tuner, _ in rows:
        tuned = tuner.best_config is not None and not tuner.best_config.is_fallback
        before = after = 0.0
        for _ in range(2):
            before = max(before, inline.submit(measure, task, -1, option).result()
                         .gflops(task.flop))
            if tuned:
                after = max(after, inline.submit(measure, task, tuner.best_config.index,
                                                 option).result().gflops(task.flop))
        after = after if tuned else before
        errors = sum(1 for line in open(log) if json.loads(line)["task"] == list(task.workload)
                     and json.loads(line)["error"])
        print(f"  {all_tasks.index(task):2d} {_short(task)[:38]:38s} {counts[task]:2d} "
              f"{len(tuner.space):5d} {tuner.trials:6d} {errors:6d} {before:8.2f} "
              f"{after:8.2f} {after / before if before else 0:6.2f}x")
        if tuner.best_config is not None and not tuner.best_config.is_fallback:
            print(f"     best: {tuner.best_config.values()}")
    print(f"  tuning time: {t_tune:.0f} s; {sum(t.trials for _, t, _ in rows)} trials")

    inputs = m.inputs(seed=0)
    npz = os.path.join(work, "inputs.npz")
    np.savez(npz, **inputs)
    base_so, tuned_so = os.path.join(work, "default.so"), os.path.join(work, "tuned.so")
    relay.build(mod, target="llvm", params=params).export_library(base_so)
    with autotvm.apply_history_best(log) as ctx:
        relay.build(mod, target="llvm", params=params).export_library(tuned_so)
    number = 5 if args.model == "resnet18" else 20
    base_ms, base_out = _latency_ms("kiln", base_so, npz, work, args.repeat, number)
    tuned_ms, tuned_out = _latency_ms("kiln", tuned_so, npz, work, args.repeat, number)
    ort_ms, want = _latency_ms("ort", onnx_path, npz, work, args.repeat, number)
    tol = dict(rtol=1e-3, atol=1e-3 * float(np.abs(want).max()))
    np.testing.assert_allclose(base_out, want, **tol)
    np.testing.assert_allclose(tuned_out, want, **tol)
    print(f"\nend to end (graph executor vs ONNX Runtime, each in its own process, median of "
          f"{args.repeat} x {number} runs; outputs checked against ONNX Runtime):")
    print(f"  Kiln, default schedules  {base_ms:8.2f} ms")
    print(f"  Kiln, tuned ({len(set(ctx.applied)):2d} anchors) {tuned_ms:8.2f} ms   "
          f"({base_ms / tuned_ms:.2f}x the default)")
    print(f"  ONNX Runtime             {ort_ms:8.2f} ms   (Kiln tuned / ORT = "
          f"{tuned_ms / ort_ms:.2f})")

    convs = [t for t in tasks if "conv2d" in t.name]
    probe = all_tasks[args.throughput_task] if args.throughput_task is not None else \
        min(convs, key=lambda t: t.flop) if convs else tasks[0]
    print(f"\ntuner throughput on {_short(probe)} ({args.throughput_trials} random trials, "
          "after a warm-up trial per worker):")
    with local_executor(2) as pool:
        local_tps = _throughput(probe, pool, args.throughput_trials, 2, seed=11)
    print(f"  local process pool, 2 workers:            {local_tps:.2f} trials/s")
    if args.no_dask:
        return
    try:
        from distributed import LocalCluster
    except ImportError:
        print("  Dask LocalCluster: dask[distributed] not installed (pip install 'kiln[tune]')")
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, resources={"timing": 1}) as cluster:
        ex = dask_executor(cluster)
        try:
            dask_tps = _throughput(probe, ex, args.throughput_trials, 2, seed=12)
            print(f"  Dask LocalCluster, 2 workers:             {dask_tps:.2f} trials/s "
                  f"({dask_tps / local_tps:.2f}x the local pool)")
            runner = RemoteRunner(ex, build_workers=2)
            try:
                remote_tps = _throughput(probe, runner, args.throughput_trials, 2, seed=13)
            finally:
                runner.shutdown()
            print(f"  Dask + RemoteRunner (2 build processes):  {remote_tps:.2f} trials/s "
                  f"({remote_tps / local_tps:.2f}x the local pool)")
        finally:
            ex.shutdown()


if __name__ == "__main__":
    main()
