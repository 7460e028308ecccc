"""Tuning logs: one JSON object per line, one line per trial, appended as trials finish.

    {"version": "kiln-autotvm/1", "compiler": "0.1.0", "target": "llvm ...",
     "task": ["dense.x86", [1, 512], [1000, 512], "float32", "float32"],
     "config": {"index": 17, "knobs": {"mr": 6, "nr": 16, ...}},
     "costs": [1.2e-05, ...], "error": null, "message": "", "build_s": 0.6, "run_s": 0.4,
     "timestamp": 1700000000.0, "gflops": 41.7}

A config is stored by its knob values (the index is a hint): a log stays readable when a
template's space grows. A line that does not parse, or whose template is not registered, is
skipped with a warning, so a log cut off mid-line stays usable.
"""
from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import warnings
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Union

from .measure import MeasureResult
from .space import SpaceError
from .task import Task, TemplateError, as_tuple, from_workload

VERSION = "kiln-autotvm/1"
try:
    COMPILER_VERSION = importlib.metadata.version("kiln")
except importlib.metadata.PackageNotFoundError:  # a source checkout, not installed
    COMPILER_VERSION = "source"


@dataclass(frozen=True)
class Record:
    """One trial: the task, the config (a point of the task's space, or -1: the fallback)
    and what the measurement gave."""
    task: Task
    config: object
    result: MeasureResult

    @property
    def gflops(self) -> float:
        return self.result.gflops(self.task.flop)


def encode(task: Task, config, result: MeasureResult) -> str:
    """The log line of a trial (without the newline)."""
    return json.dumps({
        "version": VERSION, "compiler": COMPILER_VERSION, "target": task.target,
        "task": list(task.workload),
        "config": {"index": getattr(config, "index", -1), "knobs": config.values()},
        "costs": list(result.costs), "error": result.error, "message": result.message,
        "build_s": round(result.build_s, 4), "run_s": round(result.run_s, 4),
        "timestamp": result.timestamp, "gflops": round(result.gflops(task.flop), 4),
    })


def decode(line: str) -> Record:
    """The Record of a log line; ValueError / TemplateError / SpaceError when it does not
    fit."""
    row = json.loads(line)
    if not isinstance(row, dict) or row.get("version") != VERSION:
        raise ValueError(f"not a {VERSION} record (version {row.get('version')!r})")
    task = _task(as_tuple(row["task"]), row["target"])
    knobs = row["config"]["knobs"]
    config = task.fallback() if not knobs else task.config_space.from_values(knobs)
    result = MeasureResult(costs=tuple(row["costs"]), error=row["error"],
                           message=row.get("message", ""), build_s=row.get("build_s", 0.0),
                           run_s=row.get("run_s", 0.0), timestamp=row.get("timestamp", 0.0))
    return Record(task, config, result)


@functools.lru_cache(maxsize=256)
def _task(workload: tuple, target: str) -> Task:
    return from_workload(workload, target)


def load_records(source: Union[str, os.PathLike, Iterable[str]]) -> Iterator[Record]:
    """The records of a log file (or of its lines); lines that do not fit are skipped with a
    warning naming the line."""
    if isinstance(source, (str, os.PathLike)):
        if not os.path.exists(source):
            return
        with open(source) as f:
            lines = f.readlines()
        name = str(source)
    else:
        lines, name = list(source), "log"
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield decode(line)
        except (ValueError, KeyError, TypeError, TemplateError, SpaceError) as err:
            warnings.warn(f"{name}:{n}: skipped a record that does not fit: {err}",
                          stacklevel=2)


def save_records(path: Union[str, os.PathLike], records: Iterable[Record]) -> None:
    """Appends records to a log."""
    with open(path, "a") as f:
        for r in records:
            f.write(encode(r.task, r.config, r.result) + "\n")


def best_records(records: Iterable[Record]) -> List[Record]:
    """The fastest successful record per (task, target)."""
    best = {}
    for r in records:
        if not r.result.ok:
            continue
        key = (r.task.key, r.task.target)
        if key not in best or r.result.mean < best[key].result.mean:
            best[key] = r
    return list(best.values())


def pick_best(source, out_path: Optional[str] = None) -> List[Record]:
    """The best record per task of a log (TVM's `autotvm.record.pick_best`), written to
    `out_path` when given."""
    best = best_records(load_records(source))
    if out_path is not None:
        with open(out_path, "w") as f:
            for r in best:
                f.write(encode(r.task, r.config, r.result) + "\n")
    return best


__all__ = ["COMPILER_VERSION", "Record", "VERSION", "best_records", "decode", "encode",
           "load_records", "pick_best", "save_records"]
