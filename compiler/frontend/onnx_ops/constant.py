"""Values known while compiling: Constant, ConstantOfShape, Range, and Shape / Size of a tensor
whose shape is static. Their results are constants, so the subgraphs they drive fold. (Shape
and Size of a symbolic shape are shape values: symbolic.py; a ConstantOfShape of one, and a
Range whose bounds are symbolic dims, are filled at run time.)"""
from __future__ import annotations

import numpy as np

from ...relax import expr as X
from ...relax import op as R
from .common import converter


@converter("Constant")
def _constant(ctx):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in ctx.attrs:
            v = ctx.attrs[key]
            if key in ("value_float", "value_floats"):
                v = np.asarray(v, dtype="float32")
            elif key in ("value_int", "value_ints"):
                v = np.asarray(v, dtype="int64")
            v = np.asarray(v)
            if v.dtype.kind not in "biuf":
                raise ctx.unsupported(f"a constant of dtype {v.dtype}")
            return X.const(v, str(v.dtype))
    raise ctx.unsupported(f"a constant given as {sorted(ctx.attrs) or 'nothing'} (value, "
                          "value_float(s) and value_int(s) are)")


@converter("ConstantOfShape", const_inputs=(0,))
def _constant_of_shape(ctx):
    shape = ctx.dims(0, "shape")
    value = ctx.attr("value")
    value = np.zeros(1, "float32") if value is None else np.asarray(value).reshape(-1)
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise ctx.error(f"shape {shape} has negative dims")
    if not all(isinstance(d, int) for d in shape):     # symbolic dims: filled at run time
        return R.broadcast_to(X.const(value.reshape(()), str(value.dtype)), tuple(shape))
    return X.const(np.full(shape, value[0], dtype=value.dtype), str(value.dtype))


@converter("Range", const_inputs=(0, 1, 2))
def _range(ctx):
    if any(ctx.is_symbolic(i) for i in range(3)):   # a bound is a symbolic dim
        return _symbolic_range(ctx)
    start, limit, delta = (np.asarray(ctx.const(i)) for i in range(3))
    if delta.item() == 0:
        raise ctx.error("delta must not be 0")
    out = np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype)
    return X.const(out, str(start.dtype))


def _symbolic_range(ctx):
    """Range(start, limit, delta) with a symbolic start or limit (e.g. Range(0, seq_len, 1)
    of Shape(x)): filled at run time; delta must be known."""
    if ctx.is_symbolic(2):
        raise ctx.unsupported("a delta computed from a symbolic shape")
    dtype = ctx.dtype(2)
    if not dtype.startswith("int"):
        raise ctx.unsupported(f"a {dtype} range with symbolic bounds (only integer ranges)")
    start, limit = (ctx.dims(i)[0] if ctx.is_symbolic(i) else int(ctx.const(i).item())
                    for i in range(2))
    delta = int(np.asarray(ctx.const(2)).item())
    if delta == 0:
        raise ctx.error("delta must not be 0")
    return R.arange(start, limit, delta, dtype=dtype)


@converter("Shape")
def _shape(ctx):
    shape = ctx.static_shape(0, "Shape (folded while compiling)")
    ndim = len(shape)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    end = ndim if end is None else int(end)
    sel = shape[slice(*slice(start, end).indices(ndim)[:2])]
    return X.const(np.asarray(sel, dtype="int64"), "int64")


@converter("Size")
def _size(ctx):
    shape = ctx.static_shape(0, "Size (folded while compiling)")
    return X.const(np.asarray(int(np.prod(shape, dtype=np.int64)), dtype="int64"), "int64")
