"""TensorIR schedules (`tvm.tir.Schedule`), as far as Kiln has them: a schedule holds a module
of PrimFuncs with blocks, finds blocks by name (`get_block` -> BlockRV) and gives the
statement a random variable stands for (`get_sref` -> StmtSRef). Scheduling primitives are
not implemented."""
from .schedule import BlockRV, LoopRV, Schedule, ScheduleError
from .state import StmtSRef

__all__ = ["BlockRV", "LoopRV", "Schedule", "ScheduleError", "StmtSRef"]
