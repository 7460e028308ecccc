"""verify_gpu_code: the launch limits of device kernels, as TVM's tir.analysis.verify_gpu_code.

Before: device kernels (attr calling_conv "device_kernel", attr "target" a GPU Target).
After: the same module. A kernel whose constant block size (the product of its threadIdx
extents, or one of them) exceeds the target's `max_num_threads`, or whose constant "shared"
allocations exceed `max_shared_memory_per_block` (when the target gives it), raises
ScheduleError naming the kernel, the extents and the fix. Symbolic extents are not checked here
(the runtime checks them at launch).
"""
from __future__ import annotations

from ...ir import IRModule
from ...ir.errors import ScheduleError
from ..expr import IntImm
from ..functor import post_order_visit
from ..stmt import Allocate
from .split_host_device import launch_extents


def verify_gpu_code(mod: IRModule) -> IRModule:
    for gname, func in mod.items():
        if func.attrs.get("calling_conv") == "device_kernel":
            _verify(func, gname)
    return mod


def _verify(func, gname: str) -> None:
    target = func.attrs.get("target")
    limit = target.get("max_num_threads") if target is not None else None
    launch = launch_extents(func.body)
    threads = {t: e.value for t, e in launch.items()
               if t.startswith("threadIdx") and isinstance(e, IntImm)}
    total = 1
    for v in threads.values():
        total *= v
    name = func.attrs.get("global_symbol", gname)
    kind = target.kind.name if target is not None else "?"
    if limit is not None and threads and total > limit:
        shown = ", ".join(f"{t}={v}" for t, v in threads.items())
        raise ScheduleError(
            f"kernel '{name}' uses {total} threads per block ({shown}), more than the "
            f"{limit} that target '{kind}' allows (max_num_threads): split the axes bound to "
            f"threadIdx by smaller factors (at most {limit} threads per block in total)")
    shared_limit = target.get("max_shared_memory_per_block") if target is not None else None
    if shared_limit is None:
        return
    used = []

    def visit(node):
        if isinstance(node, Allocate) and node.buffer.scope == "shared":
            size = node.buffer.dtype.bytes
            for e in node.buffer.shape:
                size = size * e.value if isinstance(e, IntImm) else 0
            used.append(size)

    post_order_visit(func.body, visit)
    if sum(used) > shared_limit:
        raise ScheduleError(
            f"kernel '{name}' allocates {sum(used)} bytes of shared memory, more than the "
            f"{shared_limit} that target '{kind}' allows per block: use smaller tiles")
