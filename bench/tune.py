"""The tuner on a model, in one run: its dense/matmul tasks tuned within a time budget, each
task's GFLOP/s with the default schedule and with the best config found (both measured again
here, the same way), the model's end-to-end latency before and after beside ONNX Runtime, and
the tuner's throughput (trials per second) on a 2-process local pool and on a 2-worker Dask
LocalCluster.

    python bench/tune.py [--batch 64] [--features 256] [--hidden 512] [--classes 128]
                         [--trials 32] [--budget-s 300] [--throughput-trials 12] [--no-dask]

The model is an MLP from the ONNX model builders (Gemm/MatMul + bias + relu, MatMul + bias,
softmax), built for the graph executor on llvm. Convolutions join once their templates have
keyword knobs (compiler/autotvm/templates.py).
"""
import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _latency_ms(lib, inputs, repeat):
    import microruntime as mr
    from microruntime import graph_executor

    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    gm.set_input(**inputs)
    gm.run()
    r = gm.benchmark(mr.cpu(), repeat=repeat, number=10)
    return r.median * 1e3, gm.get_output(0).numpy()


def _ort_ms(path, inputs, repeat):
    import numpy as np
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = sess.run(None, inputs)[0]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(10):
            sess.run(None, inputs)
        times.append((time.perf_counter() - t) / 10)
    return float(np.median(times)) * 1e3, want


def _throughput(task, executor, trials, workers, seed):
    """Trials per second of a random search on `executor`, after one warm-up trial per
    worker (process start, imports and the reference kernel's build are not counted)."""
    from compiler import autotvm
    from compiler.autotvm.measure import measure
    from compiler.autotvm.tuner import RandomTuner

    option = autotvm.measure_option(number=3, repeat=3)
    warm = [executor.submit(measure, task, 0, option) for _ in range(workers)]
    for f in warm:
        f.result()
    tuner = RandomTuner(task, seed=seed)
    t = time.perf_counter()
    tuner.tune(trials, option, executor=executor, parallel=workers)
    return tuner.trials / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--classes", type=int, default=128)
    ap.add_argument("--trials", type=int, default=32, help="trials per task")
    ap.add_argument("--budget-s", type=float, default=300.0,
                    help="time for all tasks' tuning (split evenly)")
    ap.add_argument("--throughput-trials", type=int, default=12)
    ap.add_argument("--tuner", default="xgb", choices=["xgb", "random", "grid"])
    ap.add_argument("--repeat", type=int, default=20, help="end-to-end timing repeats")
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import onnx

    from compiler import autotvm, relay
    from compiler.autotvm.executors import InlineExecutor, dask_executor, local_executor
    from compiler.autotvm.extract import task_counts
    from compiler.autotvm.measure import measure
    from compiler.autotvm.tuner import TUNERS
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=args.batch, features=args.features, hidden=args.hidden,
                        classes=args.classes)
    work = tempfile.mkdtemp(prefix="kiln_bench_tune_")
    onnx_path = os.path.join(work, "mlp.onnx")
    onnx.save(m.model, onnx_path)
    log = os.path.join(work, "tune.jsonl")
    mod, params = from_onnx(m.model, shape={"x": (args.batch, args.features)})
    tasks = task_counts(mod, params, "llvm")
    print(f"model: MLP batch {args.batch}, {args.features} -> {args.hidden} -> {args.classes}; "
          f"{len(tasks)} tasks; {os.cpu_count()} CPUs; log {log}")

    option = autotvm.measure_option(number=5, repeat=5)
    per_task = args.budget_s / max(1, len(tasks))
    rows = []
    with local_executor(2) as pool:
        for task in tasks:
            tuner = TUNERS[args.tuner](task)
            t = time.perf_counter()
            tuner.tune(args.trials, option, executor=pool, parallel=2, time_limit_s=per_task,
                       callbacks=[autotvm.callback.log_to_file(log),
                                  autotvm.callback.progress_bar(f"  {task} ", every_s=10)])
            rows.append((task, tuner, time.perf_counter() - t))

    print("\nper task (GFLOP/s, measured again in this process, 5x5 runs):")
    print(f"  {'task':58s} {'space':>6s} {'trials':>6s} {'default':>8s} {'tuned':>8s} "
          f"{'speedup':>7s}")
    inline = InlineExecutor()
    for task, tuner, _ in rows:
        before = inline.submit(measure, task, -1, option).result().gflops(task.flop)
        after = 0.0
        if tuner.best_config is not None:
            after = inline.submit(measure, task, tuner.best_config.index, option).result() \
                .gflops(task.flop)
        print(f"  {str(task)[:58]:58s} {len(tuner.space):6d} {tuner.trials:6d} "
              f"{before:8.2f} {after:8.2f} {after / before if before else 0:6.2f}x")
        if tuner.best_config is not None:
            print(f"    best: {tuner.best_config.values()}")

    inputs = m.inputs(seed=0)
    base_ms, base_out = _latency_ms(relay.build(mod, target="llvm", params=params), inputs,
                                    args.repeat)
    with autotvm.apply_history_best(log) as ctx:
        tuned_lib = relay.build(mod, target="llvm", params=params)
    tuned_ms, tuned_out = _latency_ms(tuned_lib, inputs, args.repeat)
    ort_ms, want = _ort_ms(onnx_path, inputs, args.repeat)
    np.testing.assert_allclose(base_out, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tuned_out, want, rtol=1e-4, atol=1e-5)
    print(f"\nend to end (graph executor, median of {args.repeat}x10 runs; outputs checked "
          f"against ONNX Runtime):")
    print(f"  default schedules  {base_ms:8.3f} ms")
    print(f"  tuned ({len(set(ctx.applied))} anchors)  {tuned_ms:8.3f} ms   "
          f"({base_ms / tuned_ms:.2f}x)")
    print(f"  ONNX Runtime       {ort_ms:8.3f} ms")

    first = next(iter(tasks))
    print(f"\ntuner throughput on {first} ({args.throughput_trials} random trials, after a "
          "warm-up trial per worker):")
    with local_executor(2) as pool:
        local_tps = _throughput(first, pool, args.throughput_trials, 2, seed=11)
    print(f"  local process pool, 2 workers:   {local_tps:.2f} trials/s")
    if args.no_dask:
        return
    try:
        from distributed import LocalCluster
    except ImportError:
        print("  Dask LocalCluster: dask[distributed] not installed (pip install 'kiln[tune]')")
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        ex = dask_executor(cluster)
        try:
            dask_tps = _throughput(first, ex, args.throughput_trials, 2, seed=12)
        finally:
            ex.shutdown()
    print(f"  Dask LocalCluster, 2 workers:    {dask_tps:.2f} trials/s "
          f"({dask_tps / local_tps:.2f}x the local pool)")


if __name__ == "__main__":
    main()
