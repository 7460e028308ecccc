"""Worker processes for the independent parts of one build (lowering a model's kernels,
compiling their LLVM modules).

`build_jobs()` is how many: $KILN_BUILD_JOBS, else the CPUs this process may run on (1 turns
the workers off). `fork_pool(jobs)` is a process pool forked from this process, so workers
start with its state (the module being built, the target, the pass context) and only the work
items' indices and their results cross over; None where fork is unavailable or jobs < 2, and
the caller then works alone.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

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
