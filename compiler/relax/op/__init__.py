"""Graph-level operators (as tvm.relax.op): each family registers its operators (inference
function, attributes) and gives their Python constructors."""
from . import image, nn, qnn, vm
from .base import call_dps_packed, call_tir, shape_of
from .binary import (
    add,
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
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    subtract,
)
from .create import arange, full, full_like, ones, ones_like, zeros, zeros_like
from .datatype import astype
from .index import strided_slice, take
from .layout import layout_transform
from .linear_algebra import linear, matmul
from .manipulate import (
    broadcast_to,
    concat,
    expand_dims,
    flatten,
    permute_dims,
    reshape,
    split,
    squeeze,
)
from .search import argmax, argmin, where
from .statistical import max, mean, min, prod, std, sum, variance
from .unary import (
    abs,
    ceil,
    clip,
    cos,
    erf,
    exp,
    floor,
    isnan,
    log,
    logical_not,
    negative,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tan,
    tanh,
)
