"""Kiln's operator library in tensor expressions, after TVM's `topi`.

    from compiler import te, topi
    x = te.placeholder((1, 64, 56, 56), name="x")
    w = te.placeholder((64, 64, 3, 3), name="w")
    y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))
    s = topi.x86.schedule_conv2d_nchw([y])       # the conv and the relu as one loop nest

Operators tag their computes (`topi.tag`) so schedules can find the anchor of a fused group
and inline or fuse the elementwise stages around it. `topi.generic` schedules are correct and
untuned; `topi.x86` schedules are the fast CPU ones (for the "llvm" and "c" targets alike).
"""
from . import cuda, generic, image, nn, tag, utils, x86  # noqa: F401
from .broadcast import (  # noqa: F401
    add,
    broadcast_to,
    divide,
    equal,
    floor_divide,
    floor_mod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    maximum,
    minimum,
    multiply,
    not_equal,
    power,
    subtract,
)
from .math import (  # noqa: F401
    abs,
    cast,
    ceil,
    clip,
    cos,
    erf,
    exp,
    fast_erf,
    floor,
    identity,
    isnan,
    log,
    log2,
    log10,
    negative,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    tanh,
    trunc,
)
from .reduction import all, any, argmax, argmin, max, mean, min, prod, sum  # noqa: F401
from .tensor import einsum, full, full_like, tensordot  # noqa: F401
from .transform import (  # noqa: F401
    concatenate,
    expand_dims,
    reshape,
    split,
    squeeze,
    strided_slice,
    take,
    transpose,
    where,
)
