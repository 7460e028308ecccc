"""Tuning tasks of a model: one per distinct anchor (operator + shapes + dtype) among the
kernels `relay.build` would make, for the anchors a template tunes.

    mod, params = compiler.frontend.from_onnx(model)
    tasks = extract_from_program(mod, params, target="llvm")

The model goes through the graph-level passes of relay.build for the target (weights bound
and folded, a CPU build's convolutions in the blocked layout NCHW[x]c, operators fused), so
the tasks are those of the kernels that build will lower, and a config
tuned for a task applies to every kernel with that anchor.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional

from ..relax import expr as X
from ..relax.strategy import anchor_of, workload_of
from ..relay.build_module import optimize
from ..target import Target
from .task import Task, create


def _operator_calls(func: X.Function) -> List[X.Call]:
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def extract_from_program(mod, params: Optional[Mapping] = None, target="llvm") -> List[Task]:
    """The tasks of `mod` (an IRModule with `main`, or a Function) for `target`, in the
    order their kernels appear; `task_counts` says how many kernels share each."""
    return list(task_counts(mod, params, target))


def task_counts(mod, params: Optional[Mapping] = None, target="llvm") -> Dict[Task, int]:
    """{task: number of fused kernels (distinct primitive functions) with that anchor}."""
    fused = optimize(mod, params, Target(target) if target is not None else None)
    counts: Dict[Task, int] = {}
    for _, func in fused.items():
        if not (isinstance(func, X.Function) and func.attrs.get("Primitive")):
            continue
        calls = _operator_calls(func)
        if not calls:
            continue
        workload = workload_of(anchor_of(calls))
        if workload is None:
            continue
        task = create(workload[0], workload[1:], target)
        counts[task] = counts.get(task, 0) + 1
    return counts


__all__ = ["extract_from_program", "task_counts"]
