"""The pass pipeline: one flat list (the lower passes, then the host passes) and the one runner
that executes passes. `compiler.lower` runs `lower_passes()`; `compiler.build` runs
`host_passes()` on the result for one host target.

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
from .transform.annotate_entry import annotate_entry
from .transform.lower_call_packed import lower_call_packed
from .transform.lower_intrin import lower_intrin
from .transform.lower_parallel import lower_parallel
from .transform.lower_workspace import lower_workspace
from .transform.make_packed_api import make_packed_api
from .transform.remove_no_op import remove_no_op
from .transform.simplify import simplify
from .transform.split_host_device import split_host_device
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


def host_passes() -> List[Pass]:
    """The passes `build` runs after `lower_passes()`, in order: their result is the packed form
    every host codegen prints (compiler/codegen)."""
    return [
        split_host_device,  # thread-bound loops -> device kernels + launches (CPU: an error)
        make_packed_api,    # TVM-FFI safe-call signature: unpack and check every argument
        lower_call_packed,  # Buffer arguments of call_packed -> DLTensors made on the stack
        lower_workspace,    # temporaries > 1 KiB (or dynamic) -> TVMBackendAllocWorkspace/Free
        lower_parallel,     # PARALLEL loops -> outlined task bodies launched on the thread pool
        lower_intrin,       # portable rewrites of intrinsics (sigmoid, rsqrt, pow-2 floordiv, ...)
        annotate_entry,     # mark the single function of a module as `main`
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
