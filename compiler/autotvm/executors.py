"""Where trials run: any `concurrent.futures.Executor`. Three come ready:

- `local_executor(n)`: a process pool on this machine (the default);
- `dask_executor(address | client)`: a Dask cluster, through `Client.get_executor()`;
- `RayExecutor(address)`: a Ray cluster, an Executor over Ray remote tasks.

Dask and Ray are optional (`pip install kiln[tune]`); they are imported only when asked for.
Each trial builds where it runs and times its kernel under a machine-wide lock (see
measure.py), so builds overlap and timings do not.

The engine can also give each machine one timing slot: a cluster whose machines declare the
resource "timing" (1 per machine: `dask worker ... --resources timing=1`, `ray start ...
--resources '{"timing": 1}'`; `RayExecutor(timing_slot=True)` declares it on a local
instance) lets `timing_executor(ex)` submit calls that hold it. RemoteRunner (remote.py)
submits its timing runs that way and builds elsewhere, so builds run in parallel and
timings one per machine.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Callable, Dict, Optional

from ..ir.errors import CompilerError


class ExecutorError(CompilerError):
    """An executor that cannot be made: a missing optional package or a bad address."""


def _warm_up() -> None:
    """Runs first in each worker: unpickling it imported compiler.autotvm (the compiler and
    the templates), before any trial."""


class InlineExecutor(Executor):
    """Runs each call at once, in this process (debugging; tests that need no pool). A trial
    still times its kernel in a child process, so a crashing kernel does not stop it."""

    num_workers = 1

    def submit(self, fn, /, *args, **kwargs) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as err:
            fut.set_exception(err)
        return fut


def local_executor(n_workers: Optional[int] = None) -> ProcessPoolExecutor:
    """A pool of `n_workers` (default: the CPU count) fresh processes (spawned, so a worker
    shares no thread or library state with the tuner)."""
    n = n_workers or os.cpu_count() or 1
    return ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_warm_up)


def executor_workers(executor: Executor) -> int:
    """How many trials `executor` runs at once (its workers, or cores of its cluster)."""
    n = getattr(executor, "_max_workers", None) or getattr(executor, "num_workers", None)
    if n:
        return int(n)
    client = getattr(executor, "_client", None)
    if client is not None:
        info = client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
    return os.cpu_count() or 1


def dask_executor(address_or_client, **submit_kwargs) -> Executor:
    """A concurrent.futures Executor on a Dask cluster: `address_or_client` is a scheduler
    address ("tcp://host:8786"), a `distributed.Client`, or a cluster (LocalCluster, ...).
    `submit_kwargs` (resources=..., retries=...) go to every submission. The executor keeps
    its client; `shutdown()` closes a client it opened."""
    try:
        import distributed
    except ImportError:
        raise ExecutorError("--dask needs the Dask distributed package: pip install "
                            "'kiln[tune]' (or dask[distributed])") from None
    owned = not isinstance(address_or_client, distributed.Client)
    client = distributed.Client(address_or_client) if owned else address_or_client
    ex = client.get_executor(pure=False, **submit_kwargs)
    if owned:
        close = ex.shutdown

        def shutdown(wait=True, **kwargs):
            close(wait=wait)
            client.close()

        ex.shutdown = shutdown
    return ex


class RayExecutor(Executor):
    """A concurrent.futures Executor whose calls are Ray remote tasks (one CPU each, plus
    `resources`). Connects to `address` (None: starts a local Ray instance with `num_cpus`,
    and with `timing_slot` one unit of the resource "timing") unless Ray is already
    initialised; `shutdown()` stops an instance it started."""

    def __init__(self, address: Optional[str] = None, num_cpus: Optional[int] = None,
                 resources: Optional[Dict[str, float]] = None, timing_slot: bool = False,
                 **init_kwargs):
        try:
            import ray
        except ImportError:
            raise ExecutorError("--ray needs Ray: pip install 'kiln[tune]' (or ray)") from None
        self._ray = ray
        self._owned = not ray.is_initialized()
        if self._owned:
            kwargs = dict(init_kwargs)
            kwargs.setdefault("include_dashboard", False)
            kwargs.setdefault("log_to_driver", False)
            if address is None:
                kwargs["num_cpus"] = num_cpus
                if timing_slot:
                    kwargs["resources"] = {**kwargs.get("resources", {}), TIMING_RESOURCE: 1}
            ray.init(address=address, **kwargs)
        self._options = {"num_cpus": 1, "max_retries": 0}
        if resources:
            self._options["resources"] = dict(resources)
        self._remote: Dict[Callable, object] = {}
        self.num_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def with_resources(self, resources: Dict[str, float]) -> "RayExecutor":
        """An executor on the same Ray instance whose calls also hold `resources`."""
        other = object.__new__(RayExecutor)
        other.__dict__.update(self.__dict__)
        other._owned = False
        other._options = {**self._options,
                          "resources": {**self._options.get("resources", {}), **resources}}
        other._remote = {}
        return other

    def cluster_resources(self) -> Dict[str, float]:
        return dict(self._ray.cluster_resources())

    def submit(self, fn, /, *args, **kwargs) -> Future:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(fn).options(**self._options)
        return remote.remote(*args, **kwargs).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
            self._owned = False


TIMING_RESOURCE = "timing"


def timing_executor(executor: Executor, required: Optional[bool] = None,
                    resource: str = TIMING_RESOURCE) -> Executor:
    """An executor on the engine of `executor` whose calls each hold one unit of the cluster's
    `resource` (one per machine: timing runs never overlap there), when its workers declare
    it (a Dask resource, a Ray custom resource); else `executor` itself (the machine-wide
    file lock of the runner still keeps timings apart), or, when `required`, ExecutorError."""
    client = getattr(executor, "_client", None)
    if client is not None:                    # a Dask ClientExecutor
        workers = client.scheduler_info().get("workers", {}).values()
        if any((w.get("resources") or {}).get(resource) for w in workers):
            kwargs = dict(getattr(executor, "_kwargs", {}))
            kwargs["resources"] = {**(kwargs.get("resources") or {}), resource: 1}
            return client.get_executor(**kwargs)
    elif isinstance(executor, RayExecutor):
        if executor.cluster_resources().get(resource):
            return executor.with_resources({resource: 1})
    if required:
        raise ExecutorError(f"no worker of this cluster declares the resource {resource!r}: "
                            f"start one Dask worker per machine with --resources "
                            f"{resource}=1, or Ray nodes with --resources "
                            f"'{{\"{resource}\": 1}}' (RayExecutor(timing_slot=True) locally)")
    return executor


def make_executor(dask: Optional[str] = None, ray: Optional[str] = None,
                  workers: Optional[int] = None) -> Executor:
    """The executor a command line asks for: Dask at `dask`, Ray at `ray` ("local": a local
    instance, with one timing slot), else a local pool of `workers` processes."""
    if dask and ray:
        raise ExecutorError("give --dask or --ray, not both")
    if dask:
        return dask_executor(dask)
    if ray:
        return RayExecutor(None if ray == "local" else ray, num_cpus=workers,
                           timing_slot=ray == "local")
    return local_executor(workers)


__all__ = ["ExecutorError", "InlineExecutor", "RayExecutor", "TIMING_RESOURCE", "dask_executor",
           "executor_workers", "local_executor", "make_executor", "timing_executor"]
