"""The lowering pipeline: one flat list of passes, and the one runner that executes passes.

Environment: COMPILER_DUMP_IR=1 prints the IR after each pass ("unchanged" when a pass
returned its input), COMPILER_TIME_PASSES=1 prints each pass's time, COMPILER_VERIFY=1 (set in
tests) runs `compiler.tir.verifier.verify` after every pass; it runs by default too, and
COMPILER_VERIFY=0 turns it off.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable, List, Sequence

from ..ir.module import IRModule
from . import verifier
from .transform.remove_no_op import remove_no_op
from .transform.simplify import simplify
from .transform.storage_flatten import storage_flatten
from .transform.storage_rewrite import storage_rewrite
from .transform.unroll_loop import unroll_loop
from .transform.vectorize import vectorize

Pass = Callable[[IRModule], IRModule]


def lower_passes() -> List[Pass]:
    """The passes `lower` runs, in order."""
    return [
        storage_flatten,   # N-d buffer accesses → 1-d accesses with strides and elem_offset
        simplify,          # fold constants and canonicalise the flattened index arithmetic
        vectorize,         # VECTORIZED loops of constant extent → Ramp/Broadcast vector code
        unroll_loop,       # UNROLLED loops of constant extent → copies of the body
        storage_rewrite,   # allocations whose lifetimes do not overlap share memory
        simplify,          # clean up what vectorize/unroll substituted
        remove_no_op,      # drop empty loops, no-op evaluations and constant-false branches
    ]


def _verifier():
    """`compiler.tir.verifier.verify`, unless COMPILER_VERIFY=0 turns it off."""
    if os.environ.get("COMPILER_VERIFY") == "0":
        return None

    return verifier.verify


def run_passes(mod: IRModule, passes: Sequence[Pass]) -> IRModule:
    """Run `passes` in order through the one runner (dump, time, verify)."""
    dump = os.environ.get("COMPILER_DUMP_IR") == "1"
    timing = os.environ.get("COMPILER_TIME_PASSES") == "1"
    verify = _verifier()
    for p in passes:
        name = getattr(p, "__name__", repr(p))
        start = time.perf_counter()
        new = p(mod)
        elapsed = time.perf_counter() - start
        if timing:
            print(f"[pass] {name}: {elapsed * 1e3:.2f} ms", file=sys.stderr)
        if dump:
            print(f"unchanged {name}" if new is mod else f"after {name}:\n{new}",
                  file=sys.stderr)
        if verify is not None:
            verify(new)
        mod = new
    return mod
