"""Running a hybrid script as plain Python on numpy arrays (emulation).

The script's names for loops, buffers and intrinsics are not Python's; while the script runs
they are put into its function's globals (`HYBRID_GLOBALS`), and afterwards the globals are as
they were: a name the module had is restored, the others removed.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict

import numpy

from ...target import Target


class _Bind:
    """`bind(tag, extent)`: the thread indices of a thread axis, run one after another."""

    def __init__(self, tag: str, extent: int):
        self.tag, self.extent = tag, extent

    def __iter__(self):
        return iter(range(int(self.extent)))


def _allocate(shape, dtype="float32", scope="global"):
    """`allocate` / `output_tensor`: a zero-filled array (the scope does not matter here)."""
    del scope
    return numpy.zeros(shape, dtype=dtype)


def _popcount(x):
    """The bits set in integer `x` (of its width, as unsigned)."""
    bits = numpy.dtype(type(x)).itemsize * 8 if isinstance(x, numpy.integer) else 32
    return bin(int(x) & ((1 << bits) - 1)).count("1")


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _rsqrt(x):
    return 1 / numpy.sqrt(x)


def _max_num_threads(allow_none=True):
    target = Target.current(allow_none)
    if target is None:
        raise RuntimeError("max_num_threads: no target is current; run the script inside "
                           "`with tvm.target.Target(...)`")
    return target.max_num_threads


def _inf(dtype):
    dtype = numpy.dtype(str(dtype))
    return numpy.inf if dtype.kind == "f" else numpy.iinfo(dtype).max


def _ninf(dtype):
    dtype = numpy.dtype(str(dtype))
    return -numpy.inf if dtype.kind == "f" else numpy.iinfo(dtype).min


HYBRID_GLOBALS: Dict[str, Any] = {
    "serial": range,
    "unroll": range,
    "vectorize": range,
    "parallel": range,
    "const_range": range,
    "bind": _Bind,
    "allocate": _allocate,
    "output_tensor": _allocate,
    "sqrt": numpy.sqrt,
    "rsqrt": _rsqrt,
    "log": numpy.log,
    "exp": numpy.exp,
    "tanh": numpy.tanh,
    "sigmoid": _sigmoid,
    "power": numpy.power,
    "popcount": _popcount,
    "round": round,
    "likely": lambda cond: cond,
    "ceil_div": lambda a, b: (a + b - 1) // b,
    "max_num_threads": _max_num_threads,
    "inf": _inf,
    "ninf": _ninf,
    **{name: getattr(numpy, name) for name in (
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
        "float32", "float64")},
}


@contextlib.contextmanager
def hybrid_globals(namespace: Dict[str, Any]):
    """`namespace` (a function's globals) holds HYBRID_GLOBALS for the extent of the block."""
    saved = {k: namespace[k] for k in HYBRID_GLOBALS if k in namespace}
    namespace.update(HYBRID_GLOBALS)
    try:
        yield
    finally:
        for k in HYBRID_GLOBALS:
            namespace.pop(k, None)
        namespace.update(saved)
