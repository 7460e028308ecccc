"""Worker processes for the independent parts of one build (lowering a model's kernels,
compiling their LLVM modules).

`build_jobs()` is how many: $KILN_BUILD_JOBS, else the CPUs this process may run on (1 turns
the workers off). `fork_pool(jobs)` is a process pool forked from this process, so workers
start with its state (the module being built, the target, the pass context); None where fork
is unavailable or jobs < 2, and the caller then works alone. `forked_map(tasks)` runs
zero-argument callables in such a pool: only their indices and their (pickled) results cross
over. `collector_paced_for_builds()` is the garbage collector's pace while a build runs.
"""
from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, List, Optional, Sequence

from .ir.errors import BuildError


def build_jobs() -> int:
    """Worker processes a build may use: $KILN_BUILD_JOBS, else the CPUs available."""
    env = os.environ.get("KILN_BUILD_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise BuildError(f"KILN_BUILD_JOBS={env!r} is not a number of processes") from None
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def fork_pool(jobs: int) -> Optional[ProcessPoolExecutor]:
    """A pool of `jobs` processes forked from this one, or None (fewer than 2 jobs, or no
    fork on this platform)."""
    if jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))


_TASKS: List[Callable[[], Any]] = []   # what the workers of `forked_map` run (inherited)


def _run_task(i: int):
    return _TASKS[i]()


def forked_map(tasks: Sequence[Callable[[], Any]]) -> Optional[Iterator[Any]]:
    """The results of `tasks` (zero-argument callables), in order, as forked workers
    (`build_jobs` of them) finish them; None when there is no pool to be had. The workers fork
    after the tasks are set, so the tasks themselves are never pickled; a task's exception is
    raised where its result is taken."""
    pool = fork_pool(build_jobs())
    if pool is None:
        return None

    def results():
        _TASKS[:] = tasks
        try:
            with pool:
                futures = [pool.submit(_run_task, i) for i in range(len(tasks))]
                for future in futures:
                    yield future.result()
        finally:
            _TASKS.clear()

    return results()


# The collector's thresholds during a build (generation 0 allocations, then collections of the
# younger generation per older one); CPython's defaults are (700, 10, 10).
BUILD_GC_THRESHOLDS = (50000, 50, 100)


@contextlib.contextmanager
def collector_paced_for_builds():
    """Collects garbage less often while the block runs: a build makes millions of small IR
    objects, nearly all without cycles, and at the default pace the collector rescans them
    over and over (ResNet-18 built serially: 0.95 of 10.3 s in collections, 0.07 s at
    BUILD_GC_THRESHOLDS). The thresholds are restored after; forked workers inherit them."""
    old = gc.get_threshold()
    gc.set_threshold(*BUILD_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)
