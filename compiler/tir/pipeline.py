"""The pass pipeline: one flat list (the lower passes, then the host passes) and the one runner
that executes passes. `compiler.lower` runs `lower_passes()`; `compiler.build` runs
`host_passes()` on the result for one host target, then for a GPU target `device_passes()` on
the device kernels split_host_device made.

Environment: COMPILER_DUMP_IR=1 prints the IR after each pass ("unchanged" when a pass
returned its input), COMPILER_TIME_PASSES=1 prints each pass's time.
`compiler.tir.verifier.verify` runs on the result of each `run_passes` call; COMPILER_VERIFY=1
(set in tests) runs it after every pass, which names the pass that broke the IR, and
COMPILER_VERIFY=0 turns it off.

Both lists read the current `compiler.transform.PassContext`: its "tir.add_lower_pass" passes
run at their phase, "tir.disable_vectorize" (or disabling "tir.VectorizeLoop") lowers
vectorized loops as serial loops, and a pass whose TVM name (`TVM_PASS_NAMES`) is in
`disabled_pass` is left out. Disabling a pass Kiln cannot lower without is an error. Its
instruments (compiler/instrument.py) run around every pass.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence, Tuple

from ..ir.module import IRModule
from ..transform import PassContext, enabled_passes, run_pass_list
from . import verifier
from .transform.annotate_entry import annotate_entry
from .transform.convert_blocks_to_opaque import convert_blocks_to_opaque
from .transform.hoist_guard import hoist_guard
from .transform.inject_double_buffer import inject_double_buffer
from .transform.inject_prefetch import inject_prefetch
from .transform.instrument_bound_checkers import instrument_bound_checkers
from .transform.loop_partition import loop_partition
from .transform.lower_call_packed import lower_call_packed
from .transform.lower_checked_index import lower_checked_index
from .transform.lower_init_block import lower_init_block
from .transform.lower_intrin import lower_intrin
from .transform.lower_opaque_block import lower_opaque_block
from .transform.lower_parallel import lower_parallel
from .transform.lower_workspace import lower_workspace
from .transform.make_packed_api import make_packed_api
from .transform.remove_no_op import remove_no_op
from .transform.serialize_vectorized import serialize_vectorized
from .transform.simplify import simplify
from .transform.skip_assert import skip_assert
from .transform.split_host_device import split_host_device
from .transform.storage_flatten import storage_flatten
from .transform.storage_rewrite import storage_rewrite
from .transform.thread_sync import thread_sync
from .transform.unroll_loop import unroll_loop
from .transform.vectorize import vectorize
from .transform.verify_gpu_code import verify_gpu_code

Pass = Callable[[IRModule], IRModule]

# TVM's names for Kiln's passes, as `PassContext(disabled_pass=[...])` gives them, and whether
# Kiln can leave the pass out (False: what follows it, or the codegen, needs its result).
TVM_PASS_NAMES: Dict[Pass, Tuple[Tuple[str, ...], bool]] = {
    lower_init_block: (("tir.LowerInitBlock",), False),
    convert_blocks_to_opaque: (("tir.ConvertBlocksToOpaque",), False),
    lower_opaque_block: (("tir.LowerOpaqueBlock",), False),
    storage_flatten: (("tir.StorageFlatten", "tir.FlattenBuffer"), False),
    lower_checked_index: ((), False),
    simplify: (("tir.Simplify",), True),
    loop_partition: (("tir.LoopPartition",), True),  # disabled: the guards stay in the loop
    vectorize: (("tir.VectorizeLoop",), True),  # disabled: serialize_vectorized instead
    inject_double_buffer: (("tir.InjectDoubleBuffer",), True),  # disabled: one buffer
    unroll_loop: (("tir.UnrollLoop",), True),   # disabled: the loops stay UNROLLED loops
    inject_prefetch: (("tir.InjectPrefetch",), True),  # disabled: no prefetches
    storage_rewrite: (("tir.StorageRewrite",), True),
    remove_no_op: (("tir.RemoveNoOp",), True),
    split_host_device: (("tir.SplitHostDevice",), False),
    make_packed_api: (("tir.MakePackedAPI",), False),
    lower_call_packed: (("tir.LowerTVMBuiltin",), False),
    lower_workspace: (("tir.LowerTVMBuiltin",), False),
    lower_parallel: (("tir.LowerTVMBuiltin",), False),
    lower_intrin: (("tir.LowerIntrin",), False),
    annotate_entry: ((), False),
    verify_gpu_code: (("tir.VerifyGPUCode",), True),
    thread_sync: (("tir.ThreadSync",), False),
    hoist_guard: (("tir.HoistIfThenElse",), True),
    instrument_bound_checkers: (("tir.InstrumentBoundCheckers",), True),
    skip_assert: (("tir.SkipAssert",), True),
}


def lower_passes() -> List[Pass]:
    """The passes `lower` runs, in order, under the current PassContext."""
    ctx = PassContext.current()
    return _enabled(ctx, [
        *ctx.lower_passes_of_phase(0),  # user passes, phase 0: the IR as scheduled (N-d)
        lower_init_block,  # a block's init → `if` on the first iteration of its reduction axes
        convert_blocks_to_opaque,  # block iteration variables → the values bound to them
        lower_opaque_block,  # blocks → their bodies; alloc_buffers → Allocate; predicate → if
        storage_flatten,   # N-d buffer accesses → 1-d accesses with strides and elem_offset
        simplify,          # fold constants and canonicalise the flattened index arithmetic
        *ctx.lower_passes_of_phase(1),  # user passes, phase 1: flat accesses
        loop_partition,    # pragma_loop_partition loops → guard-free main loop + guarded tail
        _vectorize_pass(ctx),  # VECTORIZED loops of constant extent → Ramp/Broadcast vector code
        lower_checked_index,  # tir.checked_index -> wrapped index + hoisted IndexError assert
        hoist_guard,       # a guard above the loops it does not depend on, marked likely
        inject_double_buffer,  # double_buffer stages: two halves in turn, next one prefetched
        unroll_loop,       # UNROLLED loops of constant extent → copies of the body
        inject_prefetch,   # Stage.prefetch scopes → a prefetch before each read, `offset` ahead
        storage_rewrite,   # allocations whose lifetimes do not overlap share memory
        *ctx.lower_passes_of_phase(2),  # user passes, phase 2: after vectorize/unroll
        simplify,          # clean up what vectorize/unroll substituted
        remove_no_op,      # drop empty loops, no-op evaluations and constant-false branches
        *_if(ctx, "tir.instrument_bound_checkers",
             instrument_bound_checkers),  # each store asserts its accesses are in bounds
        *ctx.lower_passes_of_phase(3),  # user passes, phase 3 (and above): the end
    ])


def host_passes() -> List[Pass]:
    """The passes `build` runs after `lower_passes()`, in order: their result is the packed form
    every host codegen prints (compiler/codegen)."""
    ctx = PassContext.current()
    return _enabled(ctx, [
        split_host_device,  # thread-bound loops -> device kernels + launches (CPU: an error)
        make_packed_api,    # TVM-FFI safe-call signature: unpack and check every argument
        lower_call_packed,  # Buffer arguments of call_packed -> DLTensors made on the stack
        lower_workspace,    # temporaries > 1 KiB (or dynamic) -> TVMBackendAllocWorkspace/Free
        lower_parallel,     # PARALLEL loops -> outlined task bodies launched on the thread pool
        lower_intrin,       # portable rewrites of intrinsics (sigmoid, rsqrt, pow-2 floordiv, ...)
        *_if(ctx, "tir.disable_assert", skip_assert),  # the run-time checks left out
        annotate_entry,     # mark the single function of a module as `main`
    ])


def device_passes() -> List[Pass]:
    """The passes `build` runs on the device kernels of a GPU build (attr calling_conv
    "device_kernel") after `host_passes()`; their result is what the GPU codegens print
    (compiler/codegen/device_module.py)."""
    return _enabled(PassContext.current(), [
        verify_gpu_code,    # threads per block and shared memory within the target's limits
        thread_sync,        # barriers around shared-memory reads/writes of other threads
    ])


def _if(ctx: PassContext, key: str, p: Pass) -> List[Pass]:
    """[p] when the context's config `key` is true, else []."""
    return [p] if ctx.get(key, False) else []


def _vectorize_pass(ctx: PassContext) -> Pass:
    """`vectorize`, or `serialize_vectorized` when the context turns vectorization off."""
    if ctx.get("tir.disable_vectorize", False) or "tir.VectorizeLoop" in ctx.disabled_pass:
        return serialize_vectorized
    return vectorize


def _enabled(ctx: PassContext, passes: List[Pass]) -> List[Pass]:
    """`passes` less those the context disables (by their TVM names)."""
    if ctx.get("tir.disable_storage_rewrite", False):
        passes = [p for p in passes if p is not storage_rewrite]
    return enabled_passes(passes, lambda p: TVM_PASS_NAMES.get(p, ((), True)))


def run_passes(mod: IRModule, passes: Sequence[Pass]) -> IRModule:
    """Run `passes` in order through the one runner (compiler.transform.run_pass_list: dump,
    time, instruments), the tir verifier checking the result."""
    return run_pass_list(mod, passes, verifier.verify)
