"""`python -m compiler tune`: tune the kernels of an ONNX model and write a tuning log, which
`python -m compiler compile --tuning-log` then applies (after TVM's `tvmc tune`).

The model's tasks (one per distinct dense/matmul/conv2d anchor: shapes + dtype) are tuned one
after the other, each for up to --trials trials, measured on a local process pool, a Dask
cluster (--dask ADDRESS) or a Ray cluster (--ray ADDRESS, or --ray local); with --remote the
kernels are built here and only timed on the cluster's workers (RemoteRunner). Each trial is
appended to the log as it finishes; running the same command again resumes: configs already
in the log are not measured again and count toward --trials.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .. import autotvm
from ..autotvm.executors import ExecutorError, executor_workers, make_executor
from ..autotvm.extract import task_counts
from ..autotvm.record import load_records
from ..autotvm.remote import RemoteRunner
from ..autotvm.tuner import TUNERS, CostModelError
from ..frontend import from_onnx
from ..frontend.onnx import load_model
from ..ir.errors import InternalError
from ..target import Target
from .common import CliError, Stage, one_line, parse_shape

DESCRIPTION = """\
Tune the kernels of an ONNX model: search the knobs of each kernel's schedule (tile sizes,
parallelism), measuring each config, and append one JSON line per trial to a log. Build with
the best configs: python -m compiler compile MODEL --tuning-log LOG."""

EPILOG = """\
examples:
  python -m compiler tune model.onnx --trials 64 --log tune.jsonl
  python -m compiler tune model.onnx --trials 200 --log tune.jsonl --dask tcp://sched:8786
  python -m compiler tune model.onnx --trials 64 --log tune.jsonl --ray local --workers 4
  python -m compiler compile model.onnx --tuning-log tune.jsonl -o model.so"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tune", help="tune a model's kernels; write a tuning log for compile --tuning-log",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the ONNX model file (.onnx)")
    p.add_argument("--target", default="llvm", help='the target to tune for (default "llvm")')
    p.add_argument("--trials", type=int, default=64, metavar="N",
                   help="trials per task, those already in the log included (default 64)")
    p.add_argument("--log", required=True, metavar="FILE",
                   help="the tuning log (JSON lines), appended to; resumed when it exists")
    p.add_argument("--tuner", choices=sorted(TUNERS), default="xgb",
                   help="the search: xgb (cost model + simulated annealing, the default), "
                        "random or grid")
    p.add_argument("--transfer-log", action="append", default=[], metavar="FILE",
                   help="an earlier tuning log (of another model, say) whose records of other "
                        "tasks of the same templates train the cost model before the first "
                        "trial (repeatable; xgb tuner)")
    p.add_argument("--early-stopping", type=int, default=None, metavar="N",
                   help="stop a task after N trials without a better config")
    engine = p.add_mutually_exclusive_group()
    engine.add_argument("--dask", metavar="ADDRESS",
                        help="measure on the Dask cluster whose scheduler is at ADDRESS")
    engine.add_argument("--ray", metavar="ADDRESS",
                        help='measure on the Ray cluster at ADDRESS ("local": start one here)')
    p.add_argument("--remote", action="store_true",
                   help="with --dask / --ray: build kernels here (--workers processes) and "
                        "only time them on the cluster's workers, which then need just numpy "
                        "and the microruntime (a timing resource of the cluster is used)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local worker processes (default: the CPU count; with --ray local, "
                        "its CPUs)")
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME:DIMS",
                   help="an input's shape, e.g. x:1,3,224,224 (for inputs with named dims)")
    p.add_argument("--dtype", default="float32",
                   help="the type of inputs whose type the model leaves out (default float32)")
    p.add_argument("--number", type=int, default=5,
                   help="kernel calls per timed repeat (default 5)")
    p.add_argument("--repeat", type=int, default=3, help="timed repeats per trial (default 3)")
    p.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="the time limit of one trial's run (default 20)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    try:
        print(tune_model(args))
    except (CliError, ExecutorError, CostModelError) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 1
    except InternalError:
        raise  # not the user's mistake: reported by cli.main with a hint
    except (OSError, RuntimeError, ValueError) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 1
    return 0


def _shapes(given):
    shapes = {}
    for text in given:
        name, shape = parse_shape(text)
        if not name:
            raise CliError(f"--input-shape {text!r}: write NAME:DIMS")
        shapes[name] = shape
    return shapes or None


def tune_model(args) -> str:
    """Tunes every task of the model; the summary to print."""
    if not os.path.isfile(args.model):
        raise CliError(f"no such model file: {args.model}")
    if args.trials < 1:
        raise CliError(f"--trials {args.trials}: give at least 1")
    log_dir = os.path.dirname(os.path.abspath(args.log))
    if not os.path.isdir(log_dir):
        raise CliError(f"--log {args.log}: no such directory {log_dir}")
    stage = getattr(args, "stage", None) or Stage("tune")
    target = str(Target(args.target))
    t0 = time.perf_counter()
    stage.name = f"importing {args.model}"
    mod, params = from_onnx(load_model(args.model), shape=_shapes(args.input_shape),
                            dtype=args.dtype)
    stage.name = "extracting the tuning tasks"
    counts = task_counts(mod, params, target)
    if not counts:
        return (f"{args.model}: no kernel with static shapes has a tunable template (dense, "
                "matmul, conv2d); nothing to tune (inputs with named dims: give their shapes "
                "with --input-shape)")
    history = list(load_records(args.log))
    earlier = []
    for path in args.transfer_log:
        if not os.path.isfile(path):
            raise CliError(f"--transfer-log {path}: no such file")
        earlier.extend(load_records(path))
    option = autotvm.measure_option(number=args.number, repeat=args.repeat,
                                    timeout_s=args.timeout)
    if getattr(args, "remote", False) and not (args.dask or args.ray):
        raise CliError("--remote times on the workers of a cluster: give --dask or --ray too")
    executor = make_executor(args.dask, args.ray, args.workers)
    if getattr(args, "remote", False):
        executor = RemoteRunner(executor, build_workers=args.workers)
    lines = [f"tuned {args.model} for {target}: {len(counts)} tasks, log {args.log}"]
    try:
        workers = executor_workers(executor)
        for k, (task, n) in enumerate(counts.items(), 1):
            tuner = TUNERS[args.tuner](task)
            done = tuner.load_history(history)
            others = [r for r in earlier if r.task.key != task.key and r.task.name == task.name
                      and r.result.ok and not r.config.is_fallback]
            if others:
                tuner.transfer(others)
            prefix = f"[task {k}/{len(counts)} {task.name} {_args(task)}] "
            stage.name = f"tuning task {k}/{len(counts)} {task.name} {_args(task)}"
            callbacks = [autotvm.callback.log_to_file(args.log)]
            if not args.quiet:
                callbacks.append(autotvm.callback.progress_bar(prefix, every_s=1.0))
            left = max(0, args.trials - done)
            if left and tuner.has_next():
                tuner.tune(left, option, executor=executor, callbacks=callbacks,
                           early_stopping=args.early_stopping, parallel=workers)
            lines.append(f"  {task.name} {_args(task)} x{n}: {tuner.trials + done} trials "
                         f"({done} from the log{_transferred(others)}), space "
                         f"{len(tuner.space)}, best "
                         f"{tuner.best_flops:.2f} GFLOP/s")
    finally:
        executor.shutdown()
        if isinstance(executor, RemoteRunner):
            executor.executor.shutdown()
    lines.append(f"  time: {time.perf_counter() - t0:.1f} s on {workers} workers")
    return "\n".join(lines)


def _transferred(records) -> str:
    return f", {len(records)} records of other tasks transferred" if records else ""


def _args(task) -> str:
    """`[2,8]x[4,8] float32`: the shapes and the first dtype of a task's workload."""
    shapes = [a for a in task.args if isinstance(a, tuple)]
    dtypes = [a for a in task.args if isinstance(a, str)]
    return "x".join("[" + ",".join(map(str, s)) + "]" for s in shapes) + \
        (f" {dtypes[0]}" if dtypes else "")
