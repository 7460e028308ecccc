"""Graph-level passes (one per file, each IRModule -> IRModule; the docstring of each says what
holds after it): bind_params, fold_constant, fold_batch_norm, eliminate_dead_code, fuse_ops,
plan_memory (the storage planner of the graph executor)."""
from .bind_params import bind_params
from .eliminate_dead_code import eliminate_dead_code
from .fold_batch_norm import fold_batch_norm
from .fold_constant import fold_constant
from .fuse_ops import fuse_ops
from .plan_memory import MemoryPlan, Step, plan_memory

__all__ = ["bind_params", "eliminate_dead_code", "fold_batch_norm", "fold_constant", "fuse_ops",
           "plan_memory", "MemoryPlan", "Step"]
