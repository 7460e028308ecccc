"""Measuring on other machines through the same engine: builds here, timing runs there.

    runner = RemoteRunner(dask_executor("tcp://sched:8786"))     # or RayExecutor(...), a pool
    tuner.tune(64, option, executor=runner)

`RemoteRunner` is a concurrent.futures Executor of trials: `submit(measure, task, config,
option)` builds the kernel (and the task's default, the reference) on a local build pool, in
parallel, exports both libraries to bytes, and sends them through the engine to a worker as
the input of a `python -c <runner.py>` process (a standard-library call, `subprocess.run`: the
worker needs only numpy and the microruntime, never the compiler). There the libraries are
written to a temporary directory and, under the machine's timing lock, run in a child process
of their own (a crashing kernel kills only that): outputs on random inputs checked against
the reference's, then timed with time_evaluator. The result comes back as the same
MeasureResult a local trial gives (errors classified the same way).

Timing runs claim the engine's per-machine timing slot where the cluster declares one
(executors.timing_executor: a Dask resource or a Ray custom resource "timing"); builds do not.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Executor, Future
from typing import Dict, Optional

from .executors import ExecutorError, executor_workers, local_executor, timing_executor
from .measure import (
    BUILD_ERROR,
    CRASH,
    RUN_ERROR,
    RUNNER,
    TIMEOUT,
    WRONG_RESULT,
    MeasureOption,
    MeasureResult,
    _build,
    _message,
    _remove,
    _workdir,
    config_of,
    machine_lock,
    measure,
)
from .task import Task

with open(RUNNER) as _f:
    RUNNER_SOURCE = _f.read()

_REFERENCE_BYTES: Dict[tuple, object] = {}   # (task key, target) -> bytes, or the error


def _library_bytes(task: Task, cfg) -> tuple:
    """(library bytes, argument specs) of `cfg` of `task`, built here."""
    path = os.path.join(_workdir(), f"r{os.getpid()}_{time.monotonic_ns()}.so")
    try:
        specs = _build(task, cfg, path)
        with open(path, "rb") as f:
            return f.read(), specs
    finally:
        _remove(path)


def _reference_bytes(task: Task):
    key = (task.key, task.target)
    ref = _REFERENCE_BYTES.get(key)
    if ref is None:
        try:
            ref = _library_bytes(task, task.fallback())[0]
        except Exception as err:  # the default does not build: no comparison
            ref = err
        _REFERENCE_BYTES[key] = ref
    return ref if isinstance(ref, bytes) else b""


def build_payload(task: Task, config, option: Optional[MeasureOption] = None):
    """The remote runner's input for one trial (bytes: a JSON header line, then the
    libraries), with the build time; or the MeasureResult of a config that does not build.
    Runs on the build pool."""
    option = option or MeasureOption()
    t0 = time.time()
    try:
        cfg = config_of(task, config)
        with machine_lock(option.lock_path, exclusive=False):   # beside no timing run here
            kernel, specs = _library_bytes(task, cfg)
    except Exception as err:
        return MeasureResult(error=BUILD_ERROR, message=_message(err), build_s=time.time() - t0,
                             timestamp=t0)
    reference = b""
    if option.check_correctness and not cfg.is_fallback:
        with machine_lock(option.lock_path, exclusive=False):
            reference = _reference_bytes(task)
    head = {"func": "kernel", "args": specs, "seed": option.seed, "number": option.number,
            "repeat": option.repeat, "min_repeat_ms": option.min_repeat_ms,
            "rtol": option.rtol, "atol": option.atol, "kernel_size": len(kernel),
            "reference_size": len(reference), "timeout_s": option.timeout_s,
            "lock": option.lock_path is not None, "runner": RUNNER_SOURCE}
    payload = json.dumps(head).encode() + b"\n" + kernel + reference
    return payload, time.time() - t0, t0


def result_of_run(out: dict, build_s: float, run_s: float, t0: float) -> MeasureResult:
    """The MeasureResult of the remote runner's JSON answer."""
    done = dict(build_s=build_s, run_s=run_s, timestamp=t0)
    if "costs" in out:
        return MeasureResult(costs=tuple(out["costs"]), **done)
    if "wrong" in out:
        return MeasureResult(error=WRONG_RESULT, message=out["wrong"], **done)
    if "crash" in out:
        return MeasureResult(error=CRASH, message=f"the kernel died on {out['crash']}", **done)
    if "timeout" in out:
        return MeasureResult(error=TIMEOUT, message=f"the run took over {out['timeout']} s",
                             **done)
    return MeasureResult(error=RUN_ERROR, message=str(out.get("run_error", out))[:500], **done)


class RemoteRunner(Executor):
    """Trials built here (on `build_executor`, default a local pool of `build_workers`
    processes) and timed through `executor` (Dask, Ray, a process pool; its timing slot
    claimed where the cluster has one). `python`: the workers' interpreter (default this
    one's path, for machines set up alike). Only `submit(measure, task, config, option)`."""

    def __init__(self, executor: Executor, build_executor: Optional[Executor] = None,
                 build_workers: Optional[int] = None, python: Optional[str] = None,
                 timing_slot: Optional[bool] = None):
        self.executor = executor
        self.run_executor = timing_executor(executor, required=timing_slot) \
            if timing_slot is not False else executor
        self._own_build = build_executor is None
        self.build_executor = build_executor or local_executor(build_workers)
        self.python = python or sys.executable
        self.num_workers = executor_workers(executor)
        self._lock = threading.Lock()

    def submit(self, fn, /, task: Task, config, option: Optional[MeasureOption] = None):
        if fn is not measure:
            raise ExecutorError("RemoteRunner runs trials only: submit(measure, task, config, "
                                f"option), not {getattr(fn, '__name__', fn)!r}")
        option = option or MeasureOption()
        outer: Future = Future()
        built = self.build_executor.submit(build_payload, task, config, option)
        built.add_done_callback(lambda f: self._run(f, outer, option))
        return outer

    def _run(self, built: Future, outer: Future, option: MeasureOption) -> None:
        try:
            made = built.result()
        except Exception as err:      # the build worker died
            outer.set_result(MeasureResult(error=BUILD_ERROR, message=_message(err),
                                           timestamp=time.time()))
            return
        if isinstance(made, MeasureResult):
            outer.set_result(made)
            return
        payload, build_s, t0 = made
        argv = [self.python, "-c", RUNNER_SOURCE, "-"]
        # the worker's own limit on the run is option.timeout_s; this one only bounds a
        # worker that hangs while waiting for the machine's timing lock
        limit = max(600.0, 20 * option.timeout_s)
        t_run = time.time()
        try:
            with self._lock:
                fut = self.run_executor.submit(subprocess.run, argv, input=payload,
                                               capture_output=True, timeout=limit)
        except Exception as err:
            outer.set_result(MeasureResult(error=RUN_ERROR, message=_message(err),
                                           build_s=build_s, timestamp=t0))
            return

        def finish(f: Future) -> None:
            try:
                proc = f.result()
                if proc.returncode != 0:
                    raise RuntimeError(f"the remote runner exited with {proc.returncode}: "
                                       + proc.stderr.decode(errors="replace")[-300:])
                out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
                res = result_of_run(out, build_s, time.time() - t_run, t0)
            except subprocess.TimeoutExpired:
                res = MeasureResult(error=TIMEOUT, message=f"no answer within {limit:.0f} s",
                                    build_s=build_s, timestamp=t0)
            except Exception as err:
                res = MeasureResult(error=RUN_ERROR, message=_message(err), build_s=build_s,
                                    timestamp=t0)
            outer.set_result(res)

        fut.add_done_callback(finish)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._own_build:
            self.build_executor.shutdown(wait=wait, cancel_futures=cancel_futures)


__all__ = ["RUNNER_SOURCE", "RemoteRunner", "build_payload", "result_of_run"]
