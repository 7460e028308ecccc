"""time_evaluator (TVM semantics, timed in C) and BenchmarkResult."""
import struct

import numpy as np

from ._loader import ffi, lib
from .base import check_call


class BenchmarkResult:
    """Per-repeat times in seconds and their statistics (std is the population std)."""

    def __init__(self, results):
        self.results = tuple(float(r) for r in results)
        self.mean = float(np.mean(self.results))
        self.std = float(np.std(self.results))
        self.median = float(np.median(self.results))
        self.min = float(np.min(self.results))
        self.max = float(np.max(self.results))

    def __repr__(self):
        return (f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
                f"max={self.max}, std={self.std}, results={list(self.results)})")

    def __str__(self):
        return (
            "Execution time summary:\n"
            f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} "
            f"{'min (ms)':^12} {'std (ms)':^12}\n"
            f"{self.mean * 1000:^12.4f} {self.median * 1000:^12.4f} {self.max * 1000:^12.4f} "
            f"{self.min * 1000:^12.4f} {self.std * 1000:^12.4f}"
            "               "
        )


def time_evaluator(func, dev, number=10, repeat=1, min_repeat_ms=0,
                   limit_zero_time_iterations=100, cooldown_interval_ms=0,
                   repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=None):
    """A callable timing PackedFunc `func`: 1 warm-up call, then per repeat `f_preproc` (a
    PackedFunc, optional) and `number` timed calls; returns a BenchmarkResult."""
    from .convert import convert_callable

    if cache_flush_bytes:
        raise ValueError("cache_flush_bytes is not supported by the microruntime")
    if number < 1 or repeat < 1:
        raise ValueError(f"number ({number}) and repeat ({repeat}) must be at least 1")
    from .device import device

    dev = device(dev)
    func = convert_callable(func)
    preproc = convert_callable(f_preproc) if f_preproc is not None else None
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_time_evaluator(
        func._handle, dev._c[0], number, repeat, min_repeat_ms, limit_zero_time_iterations,
        cooldown_interval_ms, repeats_to_cooldown,
        preproc._handle if preproc is not None else ffi.NULL, out))
    from .packed_func import PackedFunc

    timer = PackedFunc(out[0])
    fmt = "@" + "d" * repeat

    def evaluator(*args):
        blob = timer(*args)
        return BenchmarkResult(struct.unpack(fmt, blob))

    evaluator.func = func
    return evaluator
