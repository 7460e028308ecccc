"""`tir.Schedule(mod)`: the TensorIR schedule of an IRModule (or one PrimFunc, as "main")."""
from __future__ import annotations

from typing import List, Union

from ...ir.errors import ScheduleError
from ...ir.module import IRModule
from ..block import Block
from ..function import PrimFunc
from ..functor import IRVisitor
from .state import StmtSRef, stmt_srefs

__all__ = ["BlockRV", "LoopRV", "Schedule", "ScheduleError"]


class BlockRV:
    """A random variable that stands for a block of the schedule."""

    __slots__ = ("block", "func_name")

    def __init__(self, block: Block, func_name: str):
        self.block, self.func_name = block, func_name

    def __repr__(self) -> str:
        return f"BlockRV({self.block.name_hint!r})"


class LoopRV:
    """A random variable that stands for a loop of the schedule."""

    __slots__ = ("loop", "func_name")

    def __init__(self, loop, func_name: str):
        self.loop, self.func_name = loop, func_name


class Schedule:
    """A schedule of `mod` (an IRModule, or a PrimFunc taken as its function "main").
    `seed`, `debug_mask`, `error_render_level` and `enable_check` are TVM's options; Kiln has
    no primitives that would use them."""

    def __init__(self, mod: Union[IRModule, PrimFunc], *, seed: int = -1,
                 debug_mask: Union[str, int] = "none", error_render_level: str = "detail",
                 enable_check: bool = True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise TypeError(f"tir.Schedule takes a PrimFunc or an IRModule, got "
                            f"{type(mod).__name__}")
        self._mod = mod
        self.seed, self.debug_mask = seed, debug_mask
        self.error_render_level, self.enable_check = error_render_level, enable_check
        self._srefs = {name: stmt_srefs(f.body) for name, f in mod.functions.items()
                       if isinstance(f, PrimFunc)}

    @property
    def mod(self) -> IRModule:
        """The module being scheduled."""
        return self._mod

    def get_block(self, name: str, func_name: str = "main") -> BlockRV:
        """The block named `name` in function `func_name`; ScheduleError unless exactly one
        block has that name."""
        func = self._func(func_name)
        found: List[Block] = []

        class V(IRVisitor):
            def visit_Block(self, b):
                if b.name_hint == name:
                    found.append(b)
                self.generic_visit(b)

        V().visit(func.body)
        if len(found) != 1:
            why = "no block" if not found else f"{len(found)} blocks"
            raise ScheduleError(f"tir.Schedule.get_block: {why} named '{name}' in function "
                                f"'{func_name}'")
        return BlockRV(found[0], func_name)

    def get(self, rv):
        """The statement a random variable stands for."""
        if isinstance(rv, BlockRV):
            return rv.block
        if isinstance(rv, LoopRV):
            return rv.loop
        raise TypeError(f"tir.Schedule.get: not a random variable: {rv!r}")

    def get_sref(self, rv) -> StmtSRef:
        """The StmtSRef of the block or loop `rv` (a BlockRV, LoopRV or the statement)."""
        stmt = self.get(rv) if isinstance(rv, (BlockRV, LoopRV)) else rv
        for srefs in self._srefs.values():
            sref = srefs.get(id(stmt))
            if sref is not None:
                return sref
        raise ScheduleError(f"tir.Schedule.get_sref: {rv!r} is not a block or loop of the "
                            "scheduled module")

    def _func(self, func_name: str) -> PrimFunc:
        func = self._mod.functions.get(func_name)
        if not isinstance(func, PrimFunc):
            raise ScheduleError(f"tir.Schedule: the module has no PrimFunc '{func_name}'")
        return func
