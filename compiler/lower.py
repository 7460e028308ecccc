"""`lower(schedule | PrimFunc | IRModule, args, name, binds, simple_mode) -> IRModule`: the
schedule becomes a PrimFunc (compiler.te.schedule_ops) and then runs the pass pipeline of
compiler/tir/pipeline.py, as the current `compiler.transform.PassContext` configures it (user
passes at TVM's phases, vectorization off, passes disabled by their TVM names).

What the result satisfies (the contract the build passes may rely on):
- every buffer access in a body is 1-D on a buffer whose elem_offset is 0 (offsets and strides
  are folded into the index); the flat buffer of an argument shares the `data` Var of the N-d
  buffer in `buffer_map`, which keeps the declared shape, strides and elem_offset;
- intermediates are `Allocate`s of 1-D buffers with scope "global", "local" or "shared";
- loops start at 0; kinds are SERIAL, PARALLEL, UNROLLED (non-constant extent only, unless a
  PassContext disables "tir.UnrollLoop"),
  VECTORIZED never remains (it became vector code or SERIAL), THREAD_BINDING for GPU axes with
  `thread_binding` = the te.thread_axis IterVar (its thread_tag names it);
- a `tir.call_packed` argument may be a whole Buffer (compiler.tir.call_packed, te.extern):
  the callee gets a DLTensor* of it; the host pass lower_call_packed makes that DLTensor;
- attrs: {"global_symbol": name, "tir.noalias": True}; packed API is not generated here.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

from .ir.errors import IRError
from .ir.module import IRModule
from .te.schedule import Schedule
from .te.schedule_ops import schedule_to_primfunc
from .tir.function import PrimFunc
from .tir.pipeline import lower_passes, run_passes


def schedule_to_module(sch: Schedule, args: Optional[Sequence] = None, name: str = "main",
                       binds: Optional[Dict] = None) -> IRModule:
    """The IRModule `{name: PrimFunc}` of a schedule's loop nests, before any lowering pass."""
    if args is None:
        raise IRError("schedule_to_module needs args: the tensors/vars of the function")
    return IRModule({name: schedule_to_primfunc(sch, list(args), name, binds)})


def lower(inp, args: Optional[Sequence] = None, name: str = "main",
          binds: Optional[Dict] = None, simple_mode: bool = False) -> IRModule:
    """Lower a te Schedule (with `args`), a PrimFunc or an IRModule to optimised loop IR."""

    if isinstance(inp, Schedule):
        if args is None:
            raise IRError("lower(schedule) needs args: the tensors/vars of the function")
        mod = schedule_to_module(inp, args, name, binds)
    elif isinstance(inp, PrimFunc):
        func = inp if "global_symbol" in inp.attrs else inp.with_attr("global_symbol", name)
        mod = IRModule({func.attrs["global_symbol"]: func})
    elif isinstance(inp, IRModule):
        mod = inp
    else:
        raise IRError(f"lower expects a Schedule, PrimFunc or IRModule, got {type(inp).__name__}")
    _ = simple_mode  # packed-API generation lives in build, so nothing differs here
    return run_passes(mod, lower_passes())
