"""Measuring one config of a task, as a pure function an executor can run anywhere:

    result = measure(task, config_index, option)      # -> MeasureResult

It instantiates the template at the config, builds the kernel, and times it in a child
process (runner.py) on random inputs after comparing its outputs with those of the task's
default config (built once per process). What goes wrong is classified, never raised:
"build_error" (the template or the build failed), "wrong_result", "timeout", "crash" (the
kernel died on a signal) or "run_error". The timing run holds a machine-wide lock exclusively
(a file lock, one slot per machine whatever the engine and however many workers it runs
there) and builds hold it shared: builds run in parallel with each other, and a timing run
has the machine's cores to itself (no build, no other timing beside it).
"""
from __future__ import annotations

import fcntl
import importlib.util
import json
import multiprocessing.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

from ..build import build
from .space import ConfigEntity, FallbackConfigEntity
from .task import Task

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
# The directory that holds the microruntime package (the runner imports it from there).
_RUNTIME_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(
    importlib.util.find_spec("microruntime").origin)))

BUILD_ERROR = "build_error"
WRONG_RESULT = "wrong_result"
TIMEOUT = "timeout"
CRASH = "crash"
RUN_ERROR = "run_error"
ERRORS = (BUILD_ERROR, WRONG_RESULT, TIMEOUT, CRASH, RUN_ERROR)


def default_lock_path() -> str:
    return os.path.join(tempfile.gettempdir(), f"kiln-timing-{os.getuid()}.lock")


@dataclass(frozen=True)
class MeasureOption:
    """How a trial is measured: time_evaluator's `number`, `repeat`, `min_repeat_ms` (each
    repeat lasts at least that long, `number` growing: steadier times of tiny kernels); the
    time limit of the run; the tolerances of the comparison with the default config (atol is
    scaled by the largest reference magnitude); the timing lock's file (None: no lock)."""
    number: int = 5
    repeat: int = 3
    min_repeat_ms: int = 20
    timeout_s: float = 20.0
    rtol: float = 1e-3
    atol: float = 1e-4
    check_correctness: bool = True
    lock_path: Optional[str] = field(default_factory=default_lock_path)
    seed: int = 0


def measure_option(**kwargs) -> MeasureOption:
    """A MeasureOption (TVM's name)."""
    return MeasureOption(**kwargs)


@dataclass(frozen=True)
class MeasureInput:
    """What one trial measures: a task and a config (a point of its space or the fallback)."""
    task: Task
    config: object


@dataclass(frozen=True)
class MeasureResult:
    """The outcome of one trial: `costs` (seconds, one per repeat) when it ran, else the
    `error` kind and its `message`; how long building and running took."""
    costs: Tuple[float, ...] = ()
    error: Optional[str] = None
    message: str = ""
    build_s: float = 0.0
    run_s: float = 0.0
    timestamp: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.costs)

    @property
    def mean(self) -> float:
        return sum(self.costs) / len(self.costs) if self.costs else float("inf")

    def gflops(self, flop: float) -> float:
        """GFLOP/s of the mean time (0 for a failed trial)."""
        return flop / self.mean / 1e9 if self.ok and self.mean > 0 else 0.0


def config_of(task: Task, config):
    """`config` as a point of `task`'s space: an index (-1: the fallback), a ConfigEntity, a
    FallbackConfigEntity or a {knob: value} dict."""
    if isinstance(config, (ConfigEntity, FallbackConfigEntity)):
        return config
    if isinstance(config, dict):
        return task.config_space.from_values(config)
    if int(config) < 0:
        return task.fallback()
    return task.config_space.get(int(config))


_WORKDIR: Dict[int, str] = {}
_REFERENCES: Dict[tuple, object] = {}   # (task key, target) -> (library, arg specs) or error


def _workdir() -> str:
    d = _WORKDIR.get(os.getpid())
    if d is None:
        d = _WORKDIR[os.getpid()] = tempfile.mkdtemp(prefix="kiln_tune_")
        # removed when the process exits (a pool's worker too: multiprocessing runs these)
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(d, True), exitpriority=0)
    return d


def _build(task: Task, cfg, path: str):
    """Builds `cfg` into the library `path`; the argument specs [shape, dtype, is_output]."""
    s, tensors = task.instantiate(cfg)
    outputs = {id(op) for op in s.outputs}
    mod = build(s, tensors, target=task.target, name="kernel")
    mod.export_library(path)
    return [[[int(d) for d in t.shape], str(t.dtype), id(t.op) in outputs] for t in tensors]


def _reference(task: Task):
    """The default config's library of `task` (built once per process)."""
    ref = _REFERENCES.get((task.key, task.target))
    if ref is None:
        path = os.path.join(_workdir(), f"ref{len(_REFERENCES)}.so")
        try:
            ref = (path, _build(task, task.fallback(), path))
        except Exception as err:  # the default itself does not build: no comparison
            ref = err
        _REFERENCES[(task.key, task.target)] = ref
    return ref


@contextmanager
def machine_lock(path: Optional[str], exclusive: bool):
    """The machine-wide lock `path` (None: none), exclusive (a timing run) or shared (a
    build)."""
    if path is None:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _runner_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_RUNTIME_ROOT, env.get("PYTHONPATH")) if p)
    return env


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def measure(task: Task, config, option: Optional[MeasureOption] = None) -> MeasureResult:
    """Builds and times `config` of `task` (see the module docstring); never raises for a
    failing config."""
    option = option or MeasureOption()
    t0 = time.time()
    path = os.path.join(_workdir(), f"k{os.getpid()}_{time.monotonic_ns()}.so")
    try:
        cfg = config_of(task, config)
        with machine_lock(option.lock_path, exclusive=False):
            specs = _build(task, cfg, path)
    except Exception as err:
        return MeasureResult(error=BUILD_ERROR, message=_message(err), build_s=time.time() - t0,
                             timestamp=t0)
    t_build = time.time()
    ref = None
    if option.check_correctness and not cfg.is_fallback:
        with machine_lock(option.lock_path, exclusive=False):
            ref = _reference(task)
    spec = {"kernel": path, "reference": ref[0] if isinstance(ref, tuple) else None,
            "func": "kernel", "args": specs, "seed": option.seed, "number": option.number,
            "repeat": option.repeat, "min_repeat_ms": option.min_repeat_ms,
            "rtol": option.rtol, "atol": option.atol}
    try:
        with machine_lock(option.lock_path, exclusive=True):
            t_run = time.time()
            proc = subprocess.run([sys.executable, RUNNER, json.dumps(spec)],
                                  capture_output=True, text=True, timeout=option.timeout_s,
                                  env=_runner_env())
    except subprocess.TimeoutExpired:
        return MeasureResult(error=TIMEOUT, message=f"the run took over {option.timeout_s} s",
                             build_s=t_build - t0, run_s=option.timeout_s, timestamp=t0)
    finally:
        _remove(path)
    done = dict(build_s=t_build - t0, run_s=time.time() - t_run, timestamp=t0)
    if proc.returncode < 0:
        return MeasureResult(error=CRASH, message=f"the kernel died on "
                             f"{_signal_name(proc.returncode)}", **done)
    if proc.returncode != 0:
        return MeasureResult(error=RUN_ERROR, message=_tail(proc.stderr), **done)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "wrong" in out:
        return MeasureResult(error=WRONG_RESULT, message=out["wrong"], **done)
    return MeasureResult(costs=tuple(out["costs"]), **done)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _message(err: BaseException) -> str:
    where = traceback.extract_tb(err.__traceback__)[-1:] if err.__traceback__ else []
    at = f" (at {os.path.basename(where[0].filename)}:{where[0].lineno})" if where else ""
    return f"{type(err).__name__}: {' '.join(str(err).split())}"[:500] + at


__all__ = ["BUILD_ERROR", "CRASH", "ERRORS", "MeasureInput", "MeasureOption", "MeasureResult",
           "RUN_ERROR", "TIMEOUT", "WRONG_RESULT", "config_of", "default_lock_path",
           "machine_lock", "measure", "measure_option"]
