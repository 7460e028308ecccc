"""Which config a kernel is built with: the innermost dispatch context decides.

    with autotvm.apply_history_best("tune.jsonl"):
        lib = relay.build(mod, target="llvm", params=params)   # or relax.build

Outside any context, and for a kernel whose anchor (op + shapes + dtype + target) is not in
the context, the operator library's default schedule is used. Inside `apply_history_best`, a
kernel whose anchor has a successful record gets the fastest record's config. An entered
context occupies the kernel strategy's tuning seat (compiler/relax/strategy), which asks it
`tuned_schedule(anchor, target)` before taking the library's default.
"""
from __future__ import annotations

import json
import os
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

from ..relax.strategy import TuningSeat, workload_of
from ..target import Target
from .record import Record, best_records, load_records
from .task import Task, target_key
from .templates import fused_schedule


class DispatchContext:
    """A context that answers `query(target, workload) -> (task, config) | None`; entered
    with `with`, innermost first (it occupies the tuning seat meanwhile). `applied` lists the
    task keys it answered."""

    def __init__(self):
        self.applied: List[str] = []

    @classmethod
    def current(cls) -> Optional["DispatchContext"]:
        seat = TuningSeat.current()
        return seat if isinstance(seat, DispatchContext) else None

    def query(self, target, workload) -> Optional[Tuple[Task, object]]:
        return None

    def tuned_schedule(self, anchor, target=None) -> Optional[Callable]:
        """The schedule function (outs -> Schedule) of a fused kernel whose anchor operator
        call is `anchor`, when this context has a config for it; else None. Only CPU targets
        have templates."""
        if target is not None and not Target(target).kind.is_host:
            return None
        workload = workload_of(anchor)
        if workload is None:
            return None
        found = self.query(target, workload)
        if found is None:
            return None
        task, cfg = found
        return lambda outs: fused_schedule(task, cfg, outs)

    def __enter__(self):
        TuningSeat.occupy(self)
        return self

    def __exit__(self, *exc):
        TuningSeat.vacate(self)
        return False


def _kind(target_text: str) -> str:
    return Target(target_text).kind.name


class ApplyHistoryBest(DispatchContext):
    """The fastest successful config per (workload, target) of tuning logs (paths) or
    records. A target matches exactly, else by kind ("llvm -mcpu=x" takes an "llvm" record);
    no target (a CPU build that names none) takes the fastest CPU record. Where the fastest
    is the template's default (config index -1), the kernel keeps the library's schedule."""

    def __init__(self, records: Union[str, os.PathLike, Iterable]):
        super().__init__()
        if isinstance(records, (str, os.PathLike)):
            records = [records]
        rows: List[Record] = []
        for r in records:
            rows.extend(load_records(r) if isinstance(r, (str, os.PathLike)) else [r])
        self.best: Dict[Tuple[str, str], Record] = {
            (r.task.key, r.task.target): r for r in best_records(rows)}

    def query(self, target, workload):
        key = json.dumps(list(workload))
        if target is not None:
            tkey = target_key(target)
            rec = self.best.get((key, tkey))
            if rec is None:
                kind = _kind(tkey)
                rec = self._fastest(key, lambda t: _kind(t) == kind)
        else:
            rec = self._fastest(key, lambda t: Target(t).kind.is_host)
        if rec is None or rec.config.is_fallback:
            return None
        self.applied.append(key)
        return rec.task, rec.config

    def _fastest(self, key: str, accept: Callable[[str], bool]) -> Optional[Record]:
        found = [r for (k, t), r in self.best.items() if k == key and accept(t)]
        return min(found, key=lambda r: r.result.mean) if found else None

    def __len__(self) -> int:
        return len(self.best)


class ApplyConfig(DispatchContext):
    """Fixed configs: {task: config} (a point of the task's space), whatever the target."""

    def __init__(self, configs: Dict[Task, object]):
        super().__init__()
        self.configs = {t.key: (t, c) for t, c in configs.items()}

    def query(self, target, workload):
        found = self.configs.get(json.dumps(list(workload)))
        if found is not None:
            self.applied.append(found[0].key)
        return found


def apply_history_best(log) -> ApplyHistoryBest:
    """A context applying the best configs of a log (path, paths or records)."""
    return ApplyHistoryBest(log)


def tuned_schedule(anchor, target=None) -> Optional[Callable]:
    """The current context's tuned schedule for `anchor` (DispatchContext.tuned_schedule), or
    None outside any context."""
    ctx = DispatchContext.current()
    return None if ctx is None else ctx.tuned_schedule(anchor, target)


__all__ = ["ApplyConfig", "ApplyHistoryBest", "DispatchContext", "apply_history_best",
           "tuned_schedule"]
