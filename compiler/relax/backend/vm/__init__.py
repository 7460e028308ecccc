"""The Relax VM back end: after the graph pipeline, `vm_passes` (GPU device copies, storage
planning, shape lowering), then the bytecode (codegen.py)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

from ....ir.module import IRModule
from ....target import Target
from ....transform import PassNames, enabled_passes
from ...pipeline import named
from .device_copies import device_copies_vm
from .lower_shapes import lower_shapes_vm
from .plan_memory import plan_memory_vm

# TVM's names for the VM back end's passes; none can be left out.
TVM_PASS_NAMES: Dict[str, PassNames] = {
    "device_copies_vm": ((), False),
    "plan_memory_vm": (("StaticPlanBlockMemory",), False),
    "lower_shapes_vm": (("VMShapeLower",), False),
}


def vm_passes(target: Optional[Target] = None) -> List[Callable[[IRModule], IRModule]]:
    """The VM back end's passes, in order, for the kernels' `target` (None: a CPU)."""
    return enabled_passes([
        named(device_copies_vm, target=target),  # GPU: host kernels' values copied across
        plan_memory_vm,   # storage + alloc_tensor + kernel calls, reuse, kills
        lower_shapes_vm,  # entry checks, shape heap, make_shape, shape functions
    ], lambda p: TVM_PASS_NAMES.get(p.__name__, ((), True)))


__all__ = ["TVM_PASS_NAMES", "vm_passes"]
