"""Reductions: ReduceMean/Sum/Max/Min/Prod and ReduceSumSquare/L1/L2/LogSum/LogSumExp (axes as
attribute, or as input from opset 18 — opset 13 for ReduceSum; keepdims;
noop_with_empty_axes), ArgMax / ArgMin (keepdims, select_last_index)."""
from __future__ import annotations

from ...relax import op as R
from .common import converter, norm_axis
from .elementwise import scalar

_BASE = {"ReduceMean": R.mean, "ReduceSum": R.sum, "ReduceMax": R.max, "ReduceMin": R.min,
         "ReduceProd": R.prod, "ReduceSumSquare": R.sum, "ReduceL1": R.sum, "ReduceL2": R.sum,
         "ReduceLogSum": R.sum, "ReduceLogSumExp": R.sum}
_PRE = {"ReduceSumSquare": lambda x: R.multiply(x, x), "ReduceL1": R.abs,
        "ReduceL2": lambda x: R.multiply(x, x), "ReduceLogSumExp": R.exp}
_POST = {"ReduceL2": R.sqrt, "ReduceLogSum": R.log, "ReduceLogSumExp": R.log}


@converter(*_BASE, const_inputs=(1,))
def _reduce(ctx):
    ndim = ctx.ndim(0)
    axes_as_input = ctx.opset >= (13 if ctx.op_type == "ReduceSum" else 18)
    if axes_as_input:
        axes = ctx.ints(1, "axes") if ctx.has(1) else None
    else:
        axes = ctx.attr("axes")
    keepdims = bool(ctx.attr("keepdims", 1))
    x = ctx.input(0)
    if not axes:
        if axes_as_input and int(ctx.attr("noop_with_empty_axes", 0)):
            return x
        axes = list(range(ndim))
    axes = sorted({norm_axis(ctx, a, ndim) for a in axes})
    if ctx.op_type in _PRE:
        x = _PRE[ctx.op_type](x)
    y = _BASE[ctx.op_type](x, axes, keepdims)
    if ctx.op_type in _POST:
        y = _POST[ctx.op_type](y)
    return y


@converter("ArgMax", "ArgMin")
def _arg(ctx):
    fn = R.argmax if ctx.op_type == "ArgMax" else R.argmin
    ndim = ctx.ndim(0)
    axis = norm_axis(ctx, ctx.attr("axis", 0), ndim)
    keepdims = bool(ctx.attr("keepdims", 1))
    x = ctx.input(0)
    if not int(ctx.attr("select_last_index", 0)):
        return fn(x, axis, keepdims)
    # the last extremum: the first one of the reversed axis, counted from the end
    d = ctx.static_shape(0, "select_last_index=1")[axis]
    flipped = R.strided_slice(x, [axis], [d - 1], [-(d + 1)], [-1])
    return R.subtract(scalar(d - 1, "int64"), fn(flipped, axis, keepdims))
