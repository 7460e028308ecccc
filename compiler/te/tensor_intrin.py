"""Tensor intrinsics, as TVM's `te.decl_tensor_intrin`: a compute declaration (what the
intrinsic computes, over its own small placeholders) paired with the statements that compute it
(usually a call of a hand-written micro-kernel), for `s[C].tensorize(axis, intrin)`.

    def intrin_func(ins, outs):        # the buffers bound to the placeholders and outputs
        ib = tir.ir_builder.create()
        ib.emit(tir.call_extern("int32", "gemv_update", outs[0].access_ptr("w"),
                                ins[0].access_ptr("r"), ins[1].access_ptr("r"), m, l,
                                ins[1].strides[0]))
        return ib.get()                # or (body, reduce_reset, reduce_update)

    gemv = te.decl_tensor_intrin(c.op, intrin_func, binds={a: Ab, b: Bb, c: Cb})

A body alone serves when the tensorized loops hold every reduction axis; when some reduction
loop stays outside them, `reduce_reset` (zero the outputs) runs before that loop and
`reduce_update` (accumulate) inside it (without a reset, the body computes the first iteration).
"""
from __future__ import annotations

from typing import Dict, List, Optional

from microruntime.object import OpaqueValue

from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.buffer import Buffer, decl_buffer
from ..tir.stmt import Evaluate, Stmt
from .tensor import ComputeOp, PlaceholderOp, Tensor
from .tensor_compute import intrin_call


class TensorIntrin(OpaqueValue):
    """What decl_tensor_intrin made: `op` (a compute over `inputs`), the `buffers` bound to
    inputs then outputs, and the statements `body`, `reduce_init`, `reduce_update` (any may be
    None)."""

    def __init__(self, name: str, op: ComputeOp, inputs: List[Tensor], buffers: List[Buffer],
                 body: Optional[Stmt], reduce_init: Optional[Stmt],
                 reduce_update: Optional[Stmt]):
        self.name, self.op, self.inputs, self.buffers = name, op, inputs, buffers
        self.body, self.reduce_init, self.reduce_update = body, reduce_init, reduce_update
        self.scalar_params: list = []

    def buffer_of(self, tensor: Tensor) -> Buffer:
        tensors = list(self.inputs) + list(self.op.outputs)
        return self.buffers[tensors.index(tensor)]

    def __call__(self, *args, reduce_axis=None, scalar_inputs=None):
        """Inside te.compute: the intrinsic computing regions of tensors (TensorIntrinCall;
        compiler/te/tensor_compute.py)."""
        return intrin_call(self, args, reduce_axis, scalar_inputs)

    def __repr__(self) -> str:
        return f"TensorIntrin({self.name})"


def _as_stmt(value, name: str, what: str) -> Optional[Stmt]:
    if value is None or isinstance(value, Stmt):
        return value
    if isinstance(value, E.PrimExpr):
        return Evaluate(value)
    raise ScheduleError(f"decl_tensor_intrin '{name}': the {what} returned by the intrinsic's "
                        f"function must be a statement (ir_builder.get()) or a call, got "
                        f"{type(value).__name__}")


def decl_tensor_intrin(op, fcompute, name: str = "tensor_intrin",
                       binds: Optional[Dict[Tensor, Buffer]] = None, scalar_params=None,
                       default_buffer_params: Optional[dict] = None) -> TensorIntrin:
    """Declare a tensor intrinsic computing `op` (a te.compute over placeholders) with the
    statements `fcompute(ins, outs)` returns: one statement, or (body, reduce_reset,
    reduce_update). `scalar_params` (variables `op` may use) are given to fcompute as a third
    argument; a call of the intrinsic in te.compute passes their values (scalar inputs).
    `binds` gives the buffer of some of the tensors (with symbolic strides or offsets to bind,
    e.g. strides=[te.var("s1"), 1], offset_factor=1); the others get compact buffers made
    with `default_buffer_params` (arguments of tir.decl_buffer)."""
    if isinstance(op, Tensor):
        op = op.op
    if not isinstance(op, ComputeOp):
        raise ScheduleError(f"decl_tensor_intrin '{name}': the intrinsic's operation must be "
                            f"a te.compute, got {type(op).__name__}")
    scalar_params = list(scalar_params or [])
    for v in scalar_params:
        if not isinstance(v, E.Var):
            raise ScheduleError(f"decl_tensor_intrin '{name}': scalar_params are variables "
                                f"(te.var), got {v!r}")
    if len(op.body) != 1:
        raise ScheduleError(f"decl_tensor_intrin '{name}': the operation has {len(op.body)} "
                            "outputs; tensorize supports intrinsics with one output")
    inputs = list(op.input_tensors)
    for t in inputs:
        if not isinstance(t.op, PlaceholderOp):
            raise ScheduleError(f"decl_tensor_intrin '{name}': input '{t.name}' is computed by "
                                f"'{t.op.name}'; the intrinsic's inputs must be placeholders")
    binds = dict(binds or {})
    params = dict(default_buffer_params or {})
    buffers = []
    for t in inputs + list(op.outputs):
        buf = binds.get(t)
        if buf is None:
            buf = decl_buffer(t.shape, t.dtype, t.op.name, **params)
        elif not isinstance(buf, Buffer):
            raise ScheduleError(f"decl_tensor_intrin '{name}': binds maps '{t.name}' to "
                                f"{buf!r}, not a Buffer (tir.decl_buffer)")
        elif buf.dtype != t.dtype or len(buf.shape) != t.ndim:
            raise ScheduleError(f"decl_tensor_intrin '{name}': the buffer bound to '{t.name}' "
                                f"is {buf.dtype} of {len(buf.shape)} dimensions, the tensor "
                                f"{t.dtype} of {t.ndim}")
        buffers.append(buf)
    n = len(inputs)
    if scalar_params:
        result = fcompute(buffers[:n], buffers[n:], scalar_params)
    else:
        result = fcompute(buffers[:n], buffers[n:])
    if isinstance(result, (list, tuple)):
        if len(result) != 3:
            raise ScheduleError(f"decl_tensor_intrin '{name}': the intrinsic's function returns "
                                f"{len(result)} statements; return one, or (body, "
                                "reduce_reset, reduce_update)")
        body, init, update = (_as_stmt(r, name, w) for r, w in
                              zip(result, ("body", "reduce_reset", "reduce_update")))
    else:
        body, init, update = _as_stmt(result, name, "body"), None, None
    if body is None and update is None:
        raise ScheduleError(f"decl_tensor_intrin '{name}': the intrinsic's function returned "
                            "no statement")
    intrin = TensorIntrin(name, op, inputs, buffers, body, init, update)
    intrin.scalar_params = scalar_params
    return intrin
