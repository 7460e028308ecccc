"""Operators about calling and shapes: call_tir (what legalization produces: a loop-IR
PrimFunc called in destination-passing style, its outputs allocated by the caller),
call_dps_packed (the same with a packed function found by name) and shape_of."""
from __future__ import annotations

from typing import Sequence, Union

from ..expr import Call, Expr, ExternFunc, GlobalVar, ShapeExpr, Tuple
from ..struct_info import (
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .registry import check_arity, fail, make_call, register, tensor_arg


def _infer_dps(call: Call) -> StructInfo:
    check_arity(call, 2, 3)
    if len(call.sinfo_args) != 1:
        raise fail(call, "needs exactly one output struct info (out_sinfo)")
    if not isinstance(call.args[1].struct_info, TupleStructInfo):
        raise fail(call, f"args must be a tuple, got {call.args[1].struct_info}")
    return call.sinfo_args[0]


def _infer_shape_of(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    return ShapeStructInfo(s.shape, s.ndim)


register("relax.call_tir", _infer_dps, ("func", "args", "tir_vars"))
register("relax.call_dps_packed", _infer_dps, ("func", "args"))
register("relax.shape_of", _infer_shape_of, ("x",))


def _out(out_sinfo: Union[StructInfo, Sequence[StructInfo]]) -> StructInfo:
    if isinstance(out_sinfo, (list, tuple)):
        for s in out_sinfo:
            if not isinstance(s, TensorStructInfo):
                raise TypeError(f"out_sinfo must be TensorStructInfo(s), got {s}")
        return out_sinfo[0] if len(out_sinfo) == 1 else TupleStructInfo(out_sinfo)
    return out_sinfo


def _args(args) -> Expr:
    if isinstance(args, Tuple):
        return args
    if isinstance(args, Expr):
        return Tuple((args,))
    return Tuple(tuple(args))


def call_tir(gvar: GlobalVar, args, out_sinfo, tir_vars=None) -> Call:
    """Calls PrimFunc `gvar` with `args` followed by freshly allocated outputs of `out_sinfo`
    (a TensorStructInfo or a list of them: the result is then a tuple), then the values of
    `tir_vars` (symbolic dims the PrimFunc needs); returns the outputs."""
    args_ = [gvar, _args(args)]
    if tir_vars is not None:
        args_.append(tir_vars if isinstance(tir_vars, ShapeExpr) else ShapeExpr(tir_vars))
    return make_call("relax.call_tir", args_, sinfo_args=(_out(out_sinfo),))


def call_dps_packed(func, args, out_sinfo) -> Call:
    """As call_tir, for a packed function found by name at run time."""
    if isinstance(func, str):
        func = ExternFunc(func)
    return make_call("relax.call_dps_packed", (func, _args(args)),
                     sinfo_args=(_out(out_sinfo),))


def shape_of(x) -> Call:
    """The shape of tensor `x`, as a shape value."""
    return make_call("relax.shape_of", (x,))
