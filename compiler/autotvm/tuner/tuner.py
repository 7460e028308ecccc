"""The loop every tuner shares: ask the search for configs, measure them on an executor
(as many at once as it has workers), hand the results back, call the callbacks, stop after
`n_trial` trials, when the space is exhausted, after `early_stopping` trials without a
better config, past `time_limit_s`, or when a callback calls `tuner.stop()` (trials already
running finish and are reported).

The first trial measures the template's default (the operator library's own schedule, config
index -1) unless asked not to or a loaded log has it: a tuned config is only applied where it
beat the default (see dispatch.ApplyHistoryBest).

A search subclasses `Tuner` and implements `next_batch(n)` (up to n unvisited config
indices) and, if it learns, `update(inputs, results)`. `load_history(records)` feeds earlier
trials: those of the same task are not measured again (resume) and count toward the best;
those of other tasks of the same template are what a learning search may transfer from.
"""
from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, wait
from typing import Callable, Iterable, List, Optional, Sequence

from ..executors import executor_workers, local_executor
from ..measure import RUN_ERROR, MeasureInput, MeasureOption, MeasureResult, measure
from ..task import Task


class Tuner:
    def __init__(self, task: Task):
        self.task = task
        self.space = task.config_space
        self.visited = set()
        self.best_config = None
        self.best_flops = 0.0
        self.best_result: Optional[MeasureResult] = None
        self.trials = 0            # measured by this tuner (history not counted)
        self.best_trial = 0        # the trial that found the best so far
        self.start_time = None
        self.budget = 0            # trials the running `tune` will measure at most
        self._start_trials = 0
        self._stop = False
        self.default_result: Optional[MeasureResult] = None

    # ---- what a search implements ----
    def next_batch(self, n: int) -> List[int]:
        raise NotImplementedError

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        """Results of measured (or loaded) configs, for a search that learns."""

    def transfer(self, records) -> None:
        """Records of other tasks of the same template, for a search that learns."""

    # ---- shared ----
    def stop(self) -> None:
        """Ends the running `tune` once the trials in flight are done."""
        self._stop = True

    def has_next(self) -> bool:
        return len(self.visited) < len(self.space)

    def load_history(self, records: Iterable) -> int:
        """Feeds earlier records (record.Record); returns how many were of this task (its
        default included)."""
        own_inputs, own_results, others, defaults = [], [], [], 0
        for r in records:
            if r.task.key == self.task.key and r.config.is_fallback:
                self.default_result = r.result
                self._note_best(r.config, r.result)
                defaults += 1
            elif r.task.key == self.task.key:
                self.visited.add(r.config.index)
                own_inputs.append(MeasureInput(r.task, r.config))
                own_results.append(r.result)
                self._note_best(r.config, r.result)
            elif r.task.name == self.task.name and not r.config.is_fallback:
                others.append(r)
        if own_inputs:
            self.update(own_inputs, own_results)
        if others:
            self.transfer(others)
        return len(own_inputs) + defaults

    def _note_best(self, config, result: MeasureResult) -> bool:
        flops = result.gflops(self.task.flop)
        if result.ok and flops > self.best_flops:
            self.best_flops, self.best_config, self.best_result = flops, config, result
            return True
        return False

    def tune(self, n_trial: int, measure_option: Optional[MeasureOption] = None,
             executor: Optional[Executor] = None, early_stopping: Optional[int] = None,
             callbacks: Sequence[Callable] = (), parallel: Optional[int] = None,
             time_limit_s: Optional[float] = None, measure_default: bool = True) -> None:
        """Measures up to `n_trial` new configs on `executor` (None: a local process pool
        made and shut down here), `parallel` at a time (default: the executor's workers),
        the default first (one of the n_trial) when `measure_default` and not yet measured.
        Each callback gets (tuner, inputs, results) as trials finish."""
        option = measure_option or MeasureOption()
        own = executor is None
        executor = executor or local_executor()
        parallel = parallel or executor_workers(executor)
        self.start_time, self._start_trials = time.time(), self.trials
        with_default = measure_default and self.default_result is None and n_trial > 0
        self.budget = min(n_trial, len(self.space) - len(self.visited) + int(with_default))
        start, submitted, self._stop = self.trials, 0, False
        running = {}
        try:
            if with_default:
                running[executor.submit(measure, self.task, -1, option)] = -1
                submitted += 1
            while True:
                if time_limit_s is not None and time.time() - self.start_time > time_limit_s:
                    self._stop = True
                while not self._stop and len(running) < parallel and submitted < n_trial \
                        and self.has_next():
                    batch = [i for i in self.next_batch(min(parallel - len(running),
                                                            n_trial - submitted))
                             if i not in self.visited]
                    if not batch:
                        break
                    for index in batch:
                        self.visited.add(index)
                        try:
                            fut = executor.submit(measure, self.task, index, option)
                        except BrokenExecutor:
                            if not own:
                                raise
                            executor = local_executor(parallel)
                            fut = executor.submit(measure, self.task, index, option)
                        running[fut] = index
                        submitted += 1
                if not running:
                    break
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                inputs, results = [], []
                for fut in done:
                    index = running.pop(fut)
                    config = self.task.fallback() if index < 0 else self.space.get(index)
                    inputs.append(MeasureInput(self.task, config))
                    results.append(_result_of(fut))
                    if index < 0:
                        self.default_result = results[-1]
                for inp, res in zip(inputs, results):
                    self.trials += 1
                    if self._note_best(inp.config, res):
                        self.best_trial = self.trials
                self.update(inputs, results)
                for cb in callbacks:
                    cb(self, inputs, results)
                if early_stopping is not None and \
                        self.trials - max(self.best_trial, start) >= early_stopping:
                    self._stop = True
        finally:
            if own:
                executor.shutdown(wait=True, cancel_futures=True)

    def eta(self) -> Optional[float]:
        """Seconds left for the trials asked of the running `tune` (None before any)."""
        done = self.trials - self._start_trials
        if done <= 0 or self.start_time is None:
            return None
        rate = (time.time() - self.start_time) / done
        return max(0.0, (self.budget - done) * rate)


def _result_of(fut) -> MeasureResult:
    """A finished trial's result; a trial whose worker died is a run error, not a failure of
    the tuner."""
    try:
        return fut.result()
    except Exception as err:
        return MeasureResult(error=RUN_ERROR, message=f"the worker failed: "
                             f"{type(err).__name__}: {err}"[:500], timestamp=time.time())


__all__ = ["Tuner"]
